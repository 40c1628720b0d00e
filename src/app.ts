/**
 * buildApp(config): the whole service without a port, so tests and the server build the same thing.
 * Order: the services outside HTTP (src/app/services.ts), the Fastify instance and its request
 * handling (src/app/http.ts), the call pipeline and the task runner, then the routes (src/app/routes.ts).
 */
import type { FastifyInstance } from 'fastify';
import { pino, type DestinationStream, type Logger } from 'pino';
import { createHttpServer } from './app/http.ts';
import { registerRoutes } from './app/routes.ts';
import { openServices, type ServiceOptions } from './app/services.ts';
import { CallFeed } from './calls/feed.ts';
import type { Config } from './config.ts';
import { CredentialsStage } from './credentials/stage.ts';
import { formatByName } from './formats/index.ts';
import { answerCalls } from './http/answer-calls.ts';
import { taskAccess } from './http/scope.ts';
import { LedgerGuard } from './ledger/guard.ts';
import { LedgerSweep } from './ledger/sweep.ts';
import { requestTracingPlugin } from './plugins/tracing.ts';
import { StagedSessionRunner } from './sessions/runner.ts';
import type { Store } from './store/types.ts';
import { resumeWaitingTasks } from './tasks/connections.ts';
import { TASK_SIGNALS_WAIT_MS, TaskRunner } from './tasks/runner.ts';
import { Dispatcher } from './tools/invoke.ts';
import type { ToolRegistry } from './tools/registry.ts';
import type { Toolsets } from './toolsets/index.ts';
import { flushTracing, traceLogFields } from './tracing/index.ts';

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
  const app = createHttpServer(config, logger, metrics);
  const feed = new CallFeed(store.calls, logger);
  const sweep = new LedgerSweep(store.ledger, config.ledgerLeaseMs, logger, metrics);
  app.addHook('onClose', async () => {
    sweep.close();
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
  await registerRoutes(app, { ...services, config, version: VERSION, dispatcher, tasks, feed });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    toolport: { registry: ToolRegistry; store: Store; dispatcher: Dispatcher; config: Config; feed: CallFeed; toolsets: Toolsets; tasks: TaskRunner };
  }
}
