/**
 * One server span per request (docs/tracing.md), continuing the caller's `traceparent`/`tracestate`,
 * named `<METHOD> <route>`. Its context is made active for the request's hooks and handler, so
 * the dispatcher's `execute_tool` spans are its children and log lines carry its ids. Registered
 * only when tracing is on: otherwise no hook is added at all.
 */
import type { Context, Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RequestTracer } from '../tracing/index.ts';

const traced = Symbol('toolport.trace');

interface RequestTrace {
  span: Span;
  context: Context;
  ended: boolean;
}

type TracedRequest = FastifyRequest & { [traced]?: RequestTrace };

export const requestTracing = fp(
  async (app: FastifyInstance, { tracer }: { tracer: RequestTracer }) => {
    // Callback-style hooks: `done` runs the next hook (and at last the handler) inside the context.
    app.addHook('onRequest', (request: TracedRequest, _reply, done) => {
      const route = request.routeOptions.url ?? request.url.split('?')[0]!;
      const { span, context } = tracer.startRequest(request.headers, request.method, route, {
        'toolport.request_id': String(request.id),
        'url.path': request.url.split('?')[0]!,
      });
      request[traced] = { span, context, ended: false };
      tracer.within(context, done);
    });
    // Entered again once the body is parsed: a body read in several socket reads may resume outside it.
    app.addHook('preValidation', (request: TracedRequest, _reply, done) => {
      const trace = request[traced];
      if (trace === undefined) done();
      else tracer.within(trace.context, done);
    });
    app.addHook('onResponse', (request: TracedRequest, reply, done) => {
      end(request, reply.statusCode);
      done();
    });
    app.addHook('onRequestAbort', (request: TracedRequest, done) => {
      request[traced]?.span.addEvent('client_aborted');
      end(request, 499);
      done();
    });

    function end(request: TracedRequest, statusCode: number): void {
      const trace = request[traced];
      if (trace === undefined || trace.ended) return;
      trace.ended = true;
      tracer.endRequest(trace.span, statusCode);
    }
  },
  { name: 'toolport-request-tracing' },
);
