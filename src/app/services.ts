/**
 * The parts of the service that live outside HTTP, opened in order: tracing, callers, the store, the
 * catalog (built-ins, app options, plugins, the tools file), the vault, policy and toolsets. A part
 * that fails to open closes what was opened before it.
 */
import type { Logger } from 'pino';
import { AuditTrail } from '../audit/trail.ts';
import { codeTools } from '../builtin/code/tools.ts';
import { registerBuiltins } from '../builtin/index.ts';
import { ApiKeys } from '../callers/keys.ts';
import { TokenVerifier } from '../callers/tokens.ts';
import type { Config } from '../config.ts';
import { SecretsCipher } from '../credentials/cipher.ts';
import { Vault } from '../credentials/vault.ts';
import { ConfigError } from '../errors.ts';
import type { Guardrails } from '../guardrails/stage.ts';
import { Metrics } from '../metrics.ts';
import { buildPolicy, type PolicyParts } from '../policy/index.ts';
import type { ToolSources } from '../sources/index.ts';
import { createStore } from '../store/index.ts';
import { ResultResources } from '../store/results.ts';
import type { Store } from '../store/types.ts';
import { WorkerPool } from '../tools/isolation/pool.ts';
import { loadPlugins, type PluginOptions } from '../tools/plugins.ts';
import { Provenance } from '../tools/provenance.ts';
import { ToolRegistry, type SourceRegistry } from '../tools/registry.ts';
import { builtinSource, pluginSource, type ToolSource } from '../tools/source.ts';
import { Toolsets } from '../toolsets/index.ts';
import { ToolSearch } from '../toolsets/search.ts';
import { startTracing } from '../tracing/index.ts';
import type { TracingRuntime } from '../tracing/runtime.ts';

export interface ServiceOptions {
  /** Tools to register besides TOOL_PLUGINS, e.g. test tools: called with the registry before start. */
  register?: (registry: SourceRegistry) => void | Promise<void>;
}

export interface Services {
  readonly tracing: TracingRuntime | null;
  readonly tokens: TokenVerifier | null;
  /** The API keys; null when the service is open (no API_KEYS_FILE nor AUTH_ISSUER). */
  readonly keys: ApiKeys | null;
  readonly store: Store;
  readonly registry: ToolRegistry;
  readonly search: ToolSearch;
  readonly results: ResultResources;
  readonly provenance: Provenance;
  readonly sources: ToolSources | null;
  readonly vault: Vault | null;
  readonly metrics: Metrics;
  readonly policy: PolicyParts;
  readonly toolsets: Toolsets;
  /** The guardrail stage; null when no rule and no plugin guardrail exists (no stage at all). */
  readonly guardrails: Guardrails | null;
  /** The audit log (docs/audit.md); null with AUDIT_LOG=false. */
  readonly audit: AuditTrail | null;
  /** The worker threads of isolated handlers (docs/plugins.md); started only when a tool is isolated. */
  readonly workers: WorkerPool;
}

export async function openServices(config: Config, options: ServiceOptions, logger: Logger, version: string): Promise<Services> {
  // The SDK is loaded only now, and only when configured: otherwise nothing of OpenTelemetry runs.
  const tracing = config.tracing ? await startTracing(version) : null;
  const tokens =
    config.authIssuer === null
      ? null
      : new TokenVerifier({ issuer: config.authIssuer, audiences: audiencesOf(config), groupsClaim: config.authGroupsClaim, log: logger });
  // Users without a keys file: no keys, and every verified user may call every tool.
  const keys = config.apiKeysFile !== null ? ApiKeys.load(config.apiKeysFile) : tokens !== null ? ApiKeys.none() : null;
  const store = await createStore(config, logger);
  const registry = new ToolRegistry({ maxContentChars: config.maxContentChars });
  const search = new ToolSearch(registry);
  const results = new ResultResources(store.results, config.resultTtlS, config.maxContentChars);
  const provenance = new Provenance(store, registry, logger);
  const metrics = new Metrics();
  const audit = config.auditLog ? new AuditTrail(store.audit, { arguments: config.auditArguments, file: config.auditFile, log: logger }) : null;
  const workers = new WorkerPool({ size: config.workerPoolSize, maxOldGenerationMb: config.workerMaxOldGenerationMb, log: logger });
  const plugins: PluginOptions = { isolation: config.toolIsolation, workers };
  let sources: ToolSources | null = null;
  try {
    await registerBuiltins(registry, {
      registry,
      store,
      provenance,
      workspaceRoot: config.workspaceRoot,
      results,
      groups: config.builtins,
      search,
    });
    const builtins = new Set(registry.list().map((t) => t.name));
    if (options.register) await options.register(registry.of(pluginSource('app options')));
    await loadPlugins(registry, config.toolPlugins, process.cwd(), plugins);
    if (config.toolsFile !== null) {
      // Loaded only when used: the HTTP client and the OpenAPI parser cost start-up time.
      const { loadToolSources } = await import('../sources/index.ts');
      sources = await loadToolSources({ registry, file: config.toolsFile, log: logger, store, provenance, version, plugins });
      const loaded = sources;
      metrics.watchUpstreams(() => loaded.upstreamStatus().flatMap((u) => u.guards.map((guard) => ({ source: u.source, ...guard }))));
    }
    const vault = openVault(config, registry, sources, store, logger, audit);
    const rules = sources === null ? null : { file: sources.path, entries: sources.policy };
    const guardrails = await buildGuardrails(sources, registry, config, { metrics, results });
    const policy = await buildPolicy({ rules, registry, store, config, metrics, log: logger, audit });
    warnOfIdempotentHints(registry, logger, builtins);
    const toolsets = new Toolsets(sources?.toolsets ?? [], registry);
    if (config.codeMode || toolsets.definitions().some((d) => d.codeMode)) {
      const own = registry.of(builtinSource('code mode tools'));
      for (const tool of codeTools({ registry, search, limits: config.code })) own.registerTool(tool, { longDescription: true });
    }
    toolsets.warnUnmatched(logger);
    keys?.bindToolsets(new Set(toolsets.definitions().map((d) => d.name)), (toolset, tool) => toolsets.isMember(toolset, tool));
    // Started now, when a tool needs it: the workers import their modules before the first call.
    if (workers.prepared) workers.start();
    return { tracing, tokens, keys, store, registry, search, results, provenance, sources, vault, metrics, policy, toolsets, workers, guardrails, audit };
  } catch (err) {
    await workers.close();
    await sources?.close();
    await store.close();
    throw err;
  }
}

/** The guardrail stage, when the tools file has `guardrails:` or a plugin registered one; the module is loaded only then. */
async function buildGuardrails(
  sources: ToolSources | null,
  registry: ToolRegistry,
  config: Config,
  parts: { metrics: Metrics; results: ResultResources },
): Promise<Guardrails | null> {
  const rules = sources?.guardrails ?? [];
  const plugins = registry.guardrails();
  if (rules.length === 0 && plugins.length === 0) return null;
  const [{ compileGuards }, { Guardrails }] = await Promise.all([import('../guardrails/rules.ts'), import('../guardrails/stage.ts')]);
  return new Guardrails(compileGuards(sources?.path ?? null, rules, plugins), parts);
}

/**
 * `annotations.idempotent` only tells clients; without an `idempotency` strategy the ledger is off.
 * Plugin authors are told once per plugin (each tool, and upstreams' hints, at debug); the
 * built-ins, read-only, need no ledger.
 */
function warnOfIdempotentHints(registry: ToolRegistry, log: Logger, builtins: ReadonlySet<string>): void {
  const bySource = new Map<string, { source: ToolSource; tools: string[] }>();
  for (const tool of registry.list()) {
    if (tool.annotations?.idempotent === true && tool.idempotency === null && !builtins.has(tool.name)) {
      const { label } = tool.source;
      const group = bySource.get(label) ?? { source: tool.source, tools: [] };
      group.tools.push(tool.name);
      bySource.set(label, group);
      log.debug({ tool: tool.name, source: label }, `tool "${tool.name}" sets annotations.idempotent without an idempotency strategy`);
    }
  }
  for (const [
    source,
    {
      source: { kind },
      tools,
    },
  ] of bySource) {
    // An upstream's hints are its server's: the one line of a tools-file source (its tool count) stays the only one.
    const level = kind === 'plugin' ? 'info' : 'debug';
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
 * The credential vault (docs/credentials.md), when TOOLS_FILE declares credentials: SECRETS_KEY and PUBLIC_URL
 * are then required, and every credential a tool names must be declared.
 */
function openVault(config: Config, registry: ToolRegistry, sources: ToolSources | null, store: Store, log: Logger, audit: AuditTrail | null): Vault | null {
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
    audit,
  });
}
