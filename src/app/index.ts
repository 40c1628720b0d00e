/**
 * buildApp(config): the whole service without a port, so tests and the server build the same thing.
 * Order: the services outside HTTP (src/app/services.ts), the Fastify instance and its request
 * handling (src/app/http.ts), the call pipeline and the task runner, then the routes (src/app/routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';
import { createHttpServer } from './http.ts';
import { registerRoutes } from './routes.ts';
import { openServices, type ServiceOptions, type Services } from './services.ts';
import { CallFeed } from '../calls/feed.ts';
import type { Config } from '../config.ts';
import { CredentialsStage } from '../credentials/stage.ts';
import { formatByName } from '../formats/index.ts';
import { answerCalls } from '../http/answer-calls.ts';
import { taskAccess } from '../http/scope.ts';
import { LedgerGuard } from '../ledger/guard.ts';
import { LedgerSweep } from '../ledger/sweep.ts';
import { EventLoopGuard } from '../http/event-loop.ts';
import { requestTracing } from '../http/tracing.ts';
import { KnownSecrets, RedactionStage } from '../redaction/stage.ts';
import { StagedSessionRunner } from '../sessions/runner.ts';
import type { Store } from '../store/types.ts';
import { resumeWaitingTasks } from '../tasks/connections.ts';
import { TASK_SIGNALS_WAIT_MS, TaskRunner } from '../tasks/runner.ts';
import { Dispatcher, type FinishedCall } from '../tools/invoke.ts';
import type { AuditTrail } from '../audit/trail.ts';
import type { WorkerPool } from '../tools/isolation/pool.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Toolsets } from '../toolsets/index.ts';
import { flushTracing, traceLogFields } from '../tracing/index.ts';

export const VERSION = '0.1.0';

export interface AppOptions extends ServiceOptions {
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs this way). */
  logger?: Logger;
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

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? createLogger(config);
  const services = await openServices(config, options, logger, VERSION);
  const { tracing, keys, store, registry, results, sources, vault, metrics, policy, toolsets, provenance } = services;
  // Event-loop lag: measured always (a metric), refusing new calls past MAX_EVENT_LOOP_DELAY_MS.
  const loop = new EventLoopGuard(config.maxEventLoopDelayMs);
  metrics.watchEventLoop(() => loop.lagMs);
  const app = createHttpServer(config, logger, metrics, loop);
  app.addHook('onReady', async () => loop.start());
  const feed = new CallFeed(store.calls, logger);
  const sweep = new LedgerSweep(store.ledger, config.ledgerLeaseMs, logger, metrics);
  app.addHook('onClose', async () => {
    sweep.close();
    loop.close();
    await tasks.close(); // built below, before the app can close
    policy.close();
    await sources?.close();
    await services.workers.close();
    await feed.close();
    await services.audit?.close();
    await store.close();
  });
  if (tracing !== null) {
    app.addHook('onClose', flushTracing);
    await app.register(requestTracing, { tracer: tracing });
  }
  // The call pipeline (src/tools/pipeline/): the stages built above tools/ are handed in here.
  const sessions = new StagedSessionRunner(store, metrics);
  const dispatcher = new Dispatcher({
    registry,
    store,
    ledger: new LedgerGuard(store.ledger, config.ledgerLeaseMs, (id, owner) => sessions.view(id, owner), metrics),
    session: sessions,
    defaultTimeoutMs: config.defaultTimeoutMs,
    results,
    metrics,
    tracing: tracing?.callTracer(config.traceArguments) ?? null,
    onCall: onCallOf(feed, services.audit),
    ...(vault !== null && { credentials: new CredentialsStage(vault) }),
    ...redactionOf(config, services),
    ...(policy.gate !== null && { policy: policy.gate }),
    ...(services.guardrails !== null && { guardrails: services.guardrails }),
  });
  // A task runs the very pipeline a synchronous call runs; only where the answer goes differs.
  const tasks = new TaskRunner({
    store: store.tasks,
    registry,
    execute: (job, scope) => answerCalls(dispatcher, formatByName(job.format), job, scope, config.maxContentChars),
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
  app.decorate('toolport', { registry, store, dispatcher, config, feed, toolsets, tasks, workers: services.workers });
  provenance.recordAtStart();
  resumeWaitingTasks(tasks, { vault, approvals: policy.approvals }, logger);
  await registerRoutes(app, { ...services, config, version: VERSION, dispatcher, tasks, feed, loop });
  return app;
}

/** Who hears of every finished call: the call feed, and the audit log when it is on. */
function onCallOf(feed: CallFeed, audit: AuditTrail | null): (call: FinishedCall) => void {
  if (audit === null) return feed.observe;
  return (call) => {
    feed.observe(call);
    audit.observe(call);
  };
}

/**
 * The redaction stage, with the service's own secrets: the tools file's `${VAR}`s, OAuth client
 * secrets and the webhook's key. Absent when there is nothing to redact: no such secret, no vault
 * (whose credentials a call may hold) and no bearer (open service).
 */
function redactionOf(config: Config, services: Services): { redaction: RedactionStage } | null {
  const { sources, vault, keys } = services;
  const known = new KnownSecrets();
  known.set('tools file', sources?.variables ?? []);
  const configured = [...(vault?.definitions.values() ?? [])].flatMap((d) =>
    d.kind === 'oauth2' && d.clientSecret !== null ? [{ name: `${d.name}.client_secret`, value: d.clientSecret }] : [],
  );
  if (config.approvalWebhookSecret !== null) configured.push({ name: 'APPROVAL_WEBHOOK_SECRET', value: config.approvalWebhookSecret });
  known.set('configuration', configured);
  return known.matcher.size === 0 && vault === null && keys === null ? null : { redaction: new RedactionStage(known) };
}

declare module 'fastify' {
  interface FastifyInstance {
    toolport: {
      registry: ToolRegistry;
      store: Store;
      dispatcher: Dispatcher;
      config: Config;
      feed: CallFeed;
      toolsets: Toolsets;
      tasks: TaskRunner;
      workers: WorkerPool;
    };
  }
}
