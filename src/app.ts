/**
 * buildApp(config): the whole service without a port, so tests and the server build the same thing.
 * Order: body parsing and errors, the store and the catalog, OpenAPI, then the routes.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';
import { type Config } from './config.ts';
import { SecretsCipher } from './credentials/cipher.ts';
import { CredentialsStage } from './credentials/stage.ts';
import { Vault } from './credentials/vault.ts';
import { resumeWaitingTasks } from './tasks/connections.ts';
import { connectionRoutes } from './routes/connections.ts';
import { Closing, ConfigError, InvalidBody, JsonInputError, NotFound, sendProblem } from './errors.ts';
import { LazyChildLogger } from './lazy-logger.ts';
import { Metrics } from './metrics.ts';
import { metricsRoutes } from './routes/metrics.ts';
import { parseJson } from './json.ts';
import { openApiPlugin } from './plugins/openapi.ts';
import { healthRoutes } from './routes/health.ts';
import { invokeRoutes } from './routes/invoke.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { mcpApprovalOptions } from './mcp/client-approval.ts';
import { resultRoutes } from './routes/results.ts';
import { ResultResources } from './store/results.ts';
import { provenanceRoutes } from './routes/provenance.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { registerBuiltins } from './builtin/index.ts';
import { sourceKind } from './tools/source-kind.ts';
import { ApiKeys } from './callers/keys.ts';
import { authPlugin } from './plugins/auth.ts';
import { TokenVerifier } from './callers/tokens.ts';
import { resourceMetadataRoutes } from './routes/resource-metadata.ts';
import { methodsPlugin } from './plugins/methods.ts';
import { bodyLimitPlugin } from './plugins/body-limit.ts';
import { routeAnswersPlugin } from './plugins/route-answers.ts';
import { ledgerRoutes } from './routes/ledger.ts';
import { toolRoutes } from './routes/tools.ts';
import { createStore } from './store/index.ts';
import { type Store } from './store/types.ts';
import { Dispatcher } from './tools/invoke.ts';
import { LedgerGuard } from './ledger/guard.ts';
import { StagedSessionRunner } from './sessions/runner.ts';
import { formatByName } from './formats/index.ts';
import { answerCalls } from './http/answer-calls.ts';
import { taskAccess } from './http/scope.ts';
import { taskRoutes } from './routes/tasks.ts';
import { TASK_SIGNALS_WAIT_MS, TaskRunner } from './tasks/runner.ts';
import { CallFeed } from './calls/feed.ts';
import { callRoutes } from './routes/calls.ts';
import { callerRoutes } from './routes/caller.ts';
import { consoleRoutes } from './routes/console.ts';
import { loadPlugins } from './tools/plugins.ts';
import type { ToolSources } from './sources/index.ts';
import { Provenance } from './tools/provenance.ts';
import { ToolRegistry } from './tools/registry.ts';
import { Toolsets } from './toolsets/index.ts';
import { ToolSearch } from './toolsets/search.ts';
import { searchRoutes } from './routes/search.ts';
import { toolsetPlugin } from './plugins/toolset.ts';
import { requestTracingPlugin } from './plugins/tracing.ts';
import { buildPolicy, type PolicyParts } from './policy/index.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { flushTracing, startTracing, traceLogFields } from './tracing/index.ts';

export const VERSION = '0.1.0';

export interface AppOptions {
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs this way). */
  logger?: Logger;
  /** Tools to register besides TOOL_PLUGINS, e.g. test tools: called with the registry before start. */
  register?: (registry: ToolRegistry) => void | Promise<void>;
}

/** The root logger; when tracing, every line written inside a traced request carries `trace_id` and `span_id`. */
export function createLogger(config: Config, destination?: DestinationStream): Logger {
  const options = {
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', '*.key', '*.secret'], censor: '[redacted]' },
    ...(config.tracing && { mixin: traceLogFields }),
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}

/**
 * `annotations.idempotent` only tells clients; without an `idempotency` strategy the ledger is off.
 * Plugin authors are told once per plugin (each tool, and upstreams' hints, at debug); the
 * built-ins, read-only, need no ledger.
 */
function warnOfIdempotentHints(registry: ToolRegistry, log: Logger, builtins: ReadonlySet<string>): void {
  const bySource = new Map<string, string[]>();
  for (const tool of registry.list()) {
    if (tool.annotations?.idempotent === true && tool.idempotency === null && !builtins.has(tool.name)) {
      bySource.set(tool.source, [...(bySource.get(tool.source) ?? []), tool.name]);
      log.debug({ tool: tool.name, source: tool.source }, `tool "${tool.name}" sets annotations.idempotent without an idempotency strategy`);
    }
  }
  for (const [source, tools] of bySource) {
    // An upstream's hints are its server's: the one line of a tools-file source (its tool count) stays the only one.
    const level = sourceKind(source) === 'plugin' ? 'info' : 'debug';
    log[level](
      { source, tools: tools.length },
      `${tools.length} tool(s) of ${source} set annotations.idempotent, a hint for clients only: their calls do not go through the effect ledger without an idempotency strategy (set idempotency: {strategy: 'auto'}, or strategy 'none' to silence this)`,
    );
  }
}

/** What a token's `aud` must contain: AUTH_AUDIENCE, or else this service's URL or its /mcp (what MCP clients ask for). */
function audiencesOf(config: Config): string[] {
  if (config.authAudience !== null) return [config.authAudience];
  return [config.publicUrl!, `${config.publicUrl!}/mcp`];
}

/**
 * The credential vault (SPEC §15), when TOOLS_FILE declares credentials: SECRETS_KEY and PUBLIC_URL
 * are then required, and every credential a tool names must be declared.
 */
function openVault(config: Config, registry: ToolRegistry, sources: ToolSources | null, store: Store, log: Logger): Vault | null {
  const definitions = sources?.credentials ?? new Map();
  for (const tool of registry.list()) {
    const undeclared = tool.credentials.find((name) => !definitions.has(name));
    if (undeclared !== undefined)
      throw new ConfigError(`tool "${tool.name}" needs the credential "${undeclared}", which TOOLS_FILE does not declare under credentials:`);
  }
  if (definitions.size === 0) return null;
  if (config.secretsKey === null)
    throw new ConfigError('TOOLS_FILE declares credentials, so SECRETS_KEY must be set: 32 bytes as 64 hex characters or base64 (openssl rand -hex 32)');
  if (config.publicUrl === null)
    throw new ConfigError('TOOLS_FILE declares credentials, so PUBLIC_URL must be set: where people open connect links and where providers redirect back');
  return new Vault({
    definitions,
    store: store.credentials,
    cipher: new SecretsCipher(config.secretsKey, config.secretsKeyPrevious),
    // Sealed values are bound to who vouches for the user ids; without a token issuer, the API keys.
    issuer: config.authIssuer ?? 'api-keys',
    publicUrl: config.publicUrl,
    log,
  });
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? createLogger(config);
  // The SDK is loaded only now, and only when configured: otherwise nothing of OpenTelemetry runs.
  const tracing = config.tracing ? await startTracing(VERSION) : null;
  const tokens =
    config.authIssuer === null
      ? null
      : new TokenVerifier({ issuer: config.authIssuer, audiences: audiencesOf(config), groupsClaim: config.authGroupsClaim, log: logger });
  // Users without a keys file: no keys, and every verified user may call every tool.
  const keys = config.apiKeysFile !== null ? ApiKeys.load(config.apiKeysFile) : tokens !== null ? ApiKeys.none() : null;
  const authConfigured = keys !== null;
  const store = await createStore(config, logger);
  const registry = new ToolRegistry({ maxContentChars: config.maxContentChars });
  const search = new ToolSearch(registry);
  const results = new ResultResources(store.results, config.resultTtlS);
  const provenance = new Provenance(store, registry, logger);
  let sources: ToolSources | null = null;
  let builtins: ReadonlySet<string>;
  let vault: Vault | null;
  const metrics = new Metrics();
  let policy: PolicyParts;
  try {
    await registerBuiltins(registry, {
      registry,
      store,
      provenance,
      workspaceRoot: config.workspaceRoot,
      results,
      maxContentChars: config.maxContentChars,
      groups: config.builtins,
      search,
    });
    builtins = new Set(registry.list().map((t) => t.name));
    if (options.register) await registry.withSource('app options', () => options.register!(registry));
    await loadPlugins(registry, config.toolPlugins);
    if (config.toolsFile !== null) {
      // Loaded only when used: the HTTP client and the OpenAPI parser cost start-up time.
      const { loadToolSources } = await import('./sources/index.ts');
      sources = await loadToolSources({ registry, file: config.toolsFile, log: logger, store, provenance, version: VERSION });
    }
    vault = openVault(config, registry, sources, store, logger);
    const rules = sources === null ? null : { file: sources.path, entries: sources.policy };
    policy = await buildPolicy({ rules, registry, store, config, metrics, log: logger });
  } catch (err) {
    await sources?.close();
    await store.close();
    throw err;
  }
  warnOfIdempotentHints(registry, logger, builtins);
  const toolsets = new Toolsets(sources?.toolsets ?? [], registry);
  toolsets.warnUnmatched(logger);
  keys?.bindToolsets(new Set(toolsets.definitions().map((d) => d.name)), (toolset, tool) => toolsets.isMember(toolset, tool));

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One ToolInvoked line per call replaces Fastify's two lines per request.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Requests that arrive while closing get our own 503 problem (below), not Fastify's plain one.
    return503OnClosing: false,
    // Ledger keys in a path can be long (scope, session id, tool, Idempotency-Key): ≈ 460 characters.
    routerOptions: { maxParamLength: 2048 },
    // The router's own refusals (bad URL encoding, a path parameter too long) as problems too.
    frameworkErrors: (error, request, reply) => sendProblem(request, reply, error),
    // The per-request child logger is made only if the request logs something (src/lazy-logger.ts).
    childLoggerFactory: (parent, bindings, options) => new LazyChildLogger(parent as unknown as Logger, bindings, options) as unknown as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });

  // Only JSON is taken: strict UTF-8 (invalid bytes are refused, not replaced), then parsed with
  // limits on depth and integer size (src/json.ts).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      const text = utf8.decode(body as Buffer);
      done(null, text.trim() === '' ? undefined : parseJson(text));
    } catch (err) {
      done(new InvalidBody(err instanceof JsonInputError ? err.message : 'the body is not valid UTF-8'), undefined);
    }
  });
  app.setErrorHandler((error, request, reply) => {
    const code = (error as { code?: string }).code;
    if (code === 'TP_STORE_UNAVAILABLE') metrics.storeError();
    else if (code === 'TP_RATE_LIMITED') metrics.rateLimited(request.caller?.id ?? '');
    return sendProblem(request, reply, error);
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback-style hooks: on every request, a promise apiece would cost more than the check.
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(new Closing('toolport is shutting down: retry on another replica'));
  });
  // Answers finished while closing end their keep-alive connection, so the close is not held open.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new NotFound(`no route ${request.method} ${request.url.split('?')[0]}`)));

  const feed = new CallFeed(store.calls, logger);
  app.addHook('onClose', async () => {
    await tasks.close(); // built below, before the app can close
    policy.close();
    await sources?.close();
    await feed.close();
    await store.close();
  });
  if (tracing !== null) {
    app.addHook('onClose', flushTracing);
    await app.register(requestTracingPlugin, { tracer: tracing });
  }
  // The call pipeline (src/tools/pipeline/): the stages built above tools/ are handed in here.
  const sessions = new StagedSessionRunner(store, config.maxContentChars, metrics);
  const dispatcher = new Dispatcher({
    registry,
    store,
    ledger: new LedgerGuard(store.ledger, config.ledgerLeaseMs, config.maxContentChars, (id, owner) => sessions.view(id, owner), metrics),
    session: sessions,
    defaultTimeoutMs: config.defaultTimeoutMs,
    maxContentChars: config.maxContentChars,
    results,
    metrics,
    tracing: tracing?.callTracer(config.traceArguments) ?? null,
    onCall: feed.observe,
    ...(vault !== null && { credentials: new CredentialsStage(vault, config.maxContentChars) }),
    ...(policy.gate !== null && { policy: policy.gate }),
  });
  // A task runs the very pipeline a synchronous call runs; only where the answer goes differs.
  const tasks = new TaskRunner({
    store: store.tasks,
    registry,
    execute: (job, scope) => answerCalls(dispatcher, formatByName(job.format), job, scope),
    accessOf: taskAccess(keys, toolsets),
    ttlS: config.taskTtlS,
    timeoutMs: config.taskTimeoutMs,
    leaseMs: config.taskLeaseMs,
    maxAttempts: config.taskMaxAttempts,
    concurrency: config.taskConcurrency,
    log: logger,
    metrics,
  });
  // Hear the other replicas' task signals before answering (bounded: a store that is down answers 503 meanwhile).
  await Promise.race([tasks.listening, new Promise((resolve) => setTimeout(resolve, TASK_SIGNALS_WAIT_MS).unref())]);
  app.decorate('toolport', { registry, store, dispatcher, config, feed, toolsets, tasks });
  provenance.recordAtStart();
  resumeWaitingTasks(tasks, { vault, approvals: policy.approvals }, logger);
  // First: it must see every route added after it, and answer 404/405 before auth and body parsing.
  await app.register(methodsPlugin);
  await app.register(bodyLimitPlugin);
  await app.register(routeAnswersPlugin);
  await app.register(authPlugin, { keys, tokens, publicUrl: config.publicUrl, rateCounter: store.rateCounter });
  await app.register(toolsetPlugin, { toolsets });
  await app.register(openApiPlugin, { version: VERSION, registry, keysConfigured: authConfigured });
  if (config.authIssuer !== null && config.publicUrl !== null) {
    await app.register(resourceMetadataRoutes, { publicUrl: config.publicUrl, issuer: config.authIssuer, scopes: keys!.access.scopes() });
  }
  await app.register(healthRoutes, { store, upstreams: () => sources?.upstreamStatus() ?? [], readyRequiresUpstreams: config.readyRequiresUpstreams });
  await app.register(toolRoutes, { registry, provenance, toolsets });
  await app.register(searchRoutes, { search });
  await app.register(provenanceRoutes, { provenance });
  await app.register(invokeRoutes, { dispatcher, tasks });
  await app.register(taskRoutes, { tasks });
  await app.register(sessionRoutes, { store });
  await app.register(metricsRoutes, { metrics });
  await app.register(ledgerRoutes, { ledger: store.ledger });
  await app.register(mcpRoutes, {
    dispatcher,
    registry,
    version: VERSION,
    metrics,
    tasks,
    results,
    taskInlineMs: config.mcpTaskInlineMs,
    ...mcpApprovalOptions(policy.approvals, store.mcpClients, config.sessionTtlS),
  });
  await app.register(callRoutes, { feed });
  await app.register(callerRoutes, { keysRequired: authConfigured });
  await app.register(consoleRoutes);
  await app.register(resultRoutes, { results });
  await app.register(connectionRoutes, { vault, publicUrl: config.publicUrl ?? '' });
  await app.register(approvalRoutes, { approvals: policy.approvals, registry, keysConfigured: keys !== null });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    toolport: { registry: ToolRegistry; store: Store; dispatcher: Dispatcher; config: Config; feed: CallFeed; toolsets: Toolsets; tasks: TaskRunner };
  }
}
