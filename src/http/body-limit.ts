/**
 * 413s that clients receive (docs/formats.md): a client still sending its body when the server answers and
 * closes sees a reset (EPIPE/ECONNRESET), not the answer. So before a 413 goes out, the rest of the
 * body is read and discarded, up to a bound (bytes and time); past it the connection is closed anyway.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const DISCARD_MAX_BYTES = 64 * 1024 * 1024;
export const DISCARD_MAX_MS = 10_000;

/** Reads what is left of the request and drops it; resolves whether it reached the end. */
function discardRest(request: IncomingMessage): Promise<boolean> {
  if (request.complete || request.destroyed) return Promise.resolve(request.complete);
  return new Promise((resolve) => {
    let discarded = 0;
    const finish = (complete: boolean) => {
      clearTimeout(timer);
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('close', onError);
      resolve(complete);
    };
    const onData = (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > DISCARD_MAX_BYTES) finish(false);
    };
    const onEnd = () => finish(true);
    const onError = () => finish(false);
    const timer = setTimeout(() => finish(false), DISCARD_MAX_MS);
    request.on('data', onData);
    request.once('end', onEnd);
    request.once('error', onError);
    request.once('close', onError);
    request.resume();
  });
}

/**
 * Sends a 413 problem once the rest of the body is read and dropped (past the bound: with
 * `connection: close`). Called by the error handler, so no hook runs on the other answers.
 */
export function answerTooLarge(request: FastifyRequest, reply: FastifyReply, send: () => FastifyReply): FastifyReply | Promise<FastifyReply> {
  if (request.raw.complete) return send();
  return discardRest(request.raw).then((complete) => {
    if (!complete) reply.header('connection', 'close');
    return send();
  });
}
