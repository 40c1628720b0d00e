/**
 * POST /tools/invoke (and /tools/{name}/invoke) with `Accept: text/event-stream`: the answer is an
 * SSE stream of `progress` events while the calls run, then one `result` event holding exactly the
 * JSON the route would have answered; a request-level failure after the stream opened is an `error`
 * event holding the problem details. Event names and payloads are documented in the README.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { problemOf } from '../errors.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import { ProgressThrottle, type ProgressListener } from '../tools/progress.ts';
import { EventStreamReply } from './sse.ts';

export async function streamInvocation(
  request: FastifyRequest,
  reply: FastifyReply,
  scope: InvocationScope,
  run: (scope: InvocationScope) => Promise<object>,
): Promise<FastifyReply> {
  const stream = new EventStreamReply(request, reply);
  // One throttle per call: the calls of a turn report independently.
  const throttles = new Map<string, ProgressThrottle>();
  const progress: ProgressListener = (callId, done, total) => {
    let throttle = throttles.get(callId);
    if (throttle === undefined) {
      throttle = new ProgressThrottle((report) => stream.event('progress', { call_id: callId, done: report.done, total: report.total ?? null }));
      throttles.set(callId, throttle);
    }
    throttle.report(done, total);
  };
  let body: object;
  try {
    body = await run({ ...scope, sinks: { ...scope.sinks, progress } });
  } catch (err) {
    for (const throttle of throttles.values()) throttle.close();
    if (!stream.open) throw err; // nothing sent yet: the usual problem+json answer
    const problem = problemOf(err);
    if (problem.status === 500) request.log.error({ err }, problem.title);
    stream.event('error', { ...problem, instance: request.url.split('?')[0], request_id: String(request.id) });
    stream.end();
    return reply;
  }
  for (const throttle of throttles.values()) {
    throttle.flush();
    throttle.close();
  }
  stream.event('result', body);
  stream.end();
  return reply;
}
