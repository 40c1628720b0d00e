/**
 * buildApp(config): the whole service without a port, so tests and the server build the same thing.
 * Order: body parsing and errors, the store and the catalog, OpenAPI, then the routes.
 */
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino, type Logger } from 'pino';
import type { Config } from './config.ts';
import { InvalidBody, NotFound, sendProblem } from './errors.ts';
import { JsonInputError, parseJson } from './json.ts';
import { openApiPlugin } from './plugins/openapi.ts';
import { healthRoutes } from './routes/health.ts';
import { invokeRoutes } from './routes/invoke.ts';
import { mcpRoutes } from './routes/mcp.ts';
import { sessionRoutes } from './routes/sessions.ts';
import { registerPlanningTools } from './sessions/planning/tools.ts';
import { toolRoutes } from './routes/tools.ts';
import { createStore } from './store/index.ts';
import type { Store } from './store/types.ts';
import { Dispatcher } from './tools/invoke.ts';
import { loadPlugins } from './tools/plugins.ts';
import { ToolRegistry } from './tools/registry.ts';

export const VERSION = '0.1.0';

export interface AppOptions {
  /** A logger to use instead of one built from LOG_LEVEL (tests capture logs this way). */
  logger?: Logger;
  /** Tools to register besides TOOL_PLUGINS, e.g. test tools: called with the registry before start. */
  register?: (registry: ToolRegistry) => void | Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino({
    level: config.logLevel,
    redact: { paths: ['req.headers.authorization', 'headers.authorization', 'authorization', '*.key', '*.secret'], censor: '[redacted]' },
  });
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export async function buildApp(config: Config, options: AppOptions = {}): Promise<FastifyInstance> {
  const logger = options.logger ?? createLogger(config);
  const registry = new ToolRegistry();
  await registry.withSource('built-in planning tools', () => registerPlanningTools(registry));
  if (options.register) await registry.withSource('app options', () => options.register!(registry));
  await loadPlugins(registry, config.toolPlugins);

  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    // One ToolInvoked line per call replaces Fastify's two lines per request.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
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
  app.setErrorHandler((error, request, reply) => sendProblem(request, reply, error));
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new NotFound(`no route ${request.method} ${request.url.split('?')[0]}`)));

  const store = await createStore(config, logger);
  app.addHook('onClose', async () => store.close());
  const dispatcher = new Dispatcher({
    registry,
    store,
    defaultTimeoutMs: config.defaultTimeoutMs,
    maxContentChars: config.maxContentChars,
  });
  app.decorate('toolport', { registry, store, dispatcher, config });

  await app.register(openApiPlugin, { version: VERSION, registry });
  await app.register(healthRoutes, { store });
  await app.register(toolRoutes, { registry });
  await app.register(invokeRoutes, { dispatcher });
  await app.register(sessionRoutes, { store });
  await app.register(mcpRoutes, { dispatcher, registry, version: VERSION });
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    toolport: { registry: ToolRegistry; store: Store; dispatcher: Dispatcher; config: Config };
  }
}
