/**
 * The Fastify instance and what every request goes through before its route: request ids, strict
 * JSON bodies, one error handler answering problem+json, 503 while the service closes, and the checks
 * of Host and Origin (src/http/hosts.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { Closing, InvalidBody, JsonInputError, NotFound, Overloaded, sendProblem } from '../errors.ts';
import { answerTooLarge } from '../http/body-limit.ts';
import { parseJson } from '../json.ts';
import { LazyChildLogger } from '../lazy-logger.ts';
import type { Metrics } from '../metrics.ts';
import { guardHostsAndOrigins } from '../http/hosts.ts';
import { OVERLOADED_RETRY_AFTER_S, type EventLoopGuard } from '../http/event-loop.ts';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export function createHttpServer(config: Config, logger: Logger, metrics: Metrics, loop: EventLoopGuard | null = null): FastifyInstance {
  const app = Fastify({
    // No logger instance for Fastify: given one, it puts two listeners on every response to log its
    // end, which is off here (one ToolInvoked line per call replaces Fastify's two lines per request).
    // The root logger is set as app.log below, and each request's logger is a lazy child of it.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.maxBodyBytes,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Requests that arrive while closing get our own 503 problem (below), not Fastify's plain one.
    return503OnClosing: false,
    // Ledger keys in a path can be long (scope, session id, tool, Idempotency-Key): ≈ 460 characters.
    routerOptions: { maxParamLength: 2048 },
    // The router's own refusals (bad URL encoding, a path parameter too long) as problems too.
    frameworkErrors: (error, request, reply) => {
      sendProblem(request, reply, error);
    },
    // The per-request child logger is made only if the request logs something (src/lazy-logger.ts).
    childLoggerFactory: (_parent, bindings, options) => new LazyChildLogger(logger, bindings, options) as unknown as FastifyBaseLogger,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
  });
  app.log = logger as FastifyBaseLogger;

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
    if ((error as { statusCode?: number }).statusCode === 413) return answerTooLarge(request, reply, () => sendProblem(request, reply, error));
    return sendProblem(request, reply, error);
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Callback-style hooks: on every request, a promise apiece would cost more than the check. The
  // event loop's lag is read here too, so refusing calls under load adds no hook of its own.
  app.addHook('onRequest', (request, reply, done) => {
    if (!closing && loop?.overloaded !== true) return done();
    if (closing) {
      reply.header('connection', 'close');
      return done(new Closing('toolport is shutting down: retry on another replica'));
    }
    if (request.routeOptions.config.startsCalls !== true) return done();
    metrics.overloaded();
    reply.header('retry-after', String(OVERLOADED_RETRY_AFTER_S));
    done(
      new Overloaded(`the event loop lags ${Math.round(loop!.lagMs)} ms, past MAX_EVENT_LOOP_DELAY_MS (${loop!.maxMs}): retry shortly or on another replica`),
    );
  });
  // Before any route's own hooks (auth included): a rebound name or a foreign page is refused first.
  guardHostsAndOrigins(app, config, logger);
  closeAnswersInFlight(app);
  app.setNotFoundHandler((request, reply) => sendProblem(request, reply, new NotFound(`no route ${request.method} ${request.url.split('?')[0]}`)));
  return app;
}

/**
 * Answers still to be sent when the close begins end their keep-alive connection (`connection:
 * close`), so the close is not held open. Marked once, at the close, on each open connection's
 * answer in progress: connections are counted as they open and close, nothing is done per answer.
 */
function closeAnswersInFlight(app: FastifyInstance): void {
  const sockets = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  app.addHook('preClose', (done) => {
    for (const socket of sockets) {
      // Node's own link from a socket to the answer it is writing (undocumented, stable since Node 0.x).
      const answer = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (answer != null && !answer.headersSent) answer.setHeader('connection', 'close');
    }
    done();
  });
}
