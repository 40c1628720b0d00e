/**
 * Spans of a traced process: the request (continuing the caller's `traceparent`), one
 * `execute_tool <name>` per call with the GenAI and toolport attributes, child spans for the
 * ledger, the session commit and upstream calls, and task runs linked to their request.
 * Loaded only when tracing is on (see ./index.ts).
 */
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { SpanAttributes, TraceLink } from './types.ts';
import type { RunningSdk } from './sdk.ts';

/** What a call span reads of the dispatcher's call and result (structural: tracing imports nothing of tools/). */
export interface TracedCall {
  id: string | null;
  name: string;
  arguments: unknown;
}
export interface TracedScope {
  caller: { id: string | null };
  options: { format: string };
}
export interface TracedResult {
  id: string;
  success: boolean;
  replayed: boolean;
  idempotency_key: string | null;
  error: { code: string; detail: string } | null;
}

/** The dispatcher's side: one span per call. */
export interface CallTracer {
  traceCall<R extends TracedResult>(call: TracedCall, scope: TracedScope, run: () => Promise<R>): Promise<R>;
}

/** The HTTP edge's side: one server span per request. */
export interface RequestTracer {
  startRequest(
    headers: Record<string, string | string[] | undefined>,
    method: string,
    route: string,
    attributes: SpanAttributes,
  ): { span: Span; context: Context };
  endRequest(span: Span, statusCode: number): void;
  /** Runs `fn` with `ctx` active (the rest of a request's hooks and its handler). */
  within<T>(ctx: Context, fn: () => T): T;
}

const headerGetter = {
  keys: (carrier: Record<string, string | string[] | undefined>) => Object.keys(carrier),
  get: (carrier: Record<string, string | string[] | undefined>, key: string) => carrier[key],
};

function recordFailure(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.name : 'error' });
}

export class TracingRuntime implements RequestTracer {
  readonly #sdk: RunningSdk;

  constructor(sdk: RunningSdk) {
    this.#sdk = sdk;
  }

  /** The dispatcher's tracer; with `traceArguments`, call arguments and error details go on its spans. */
  callTracer(traceArguments: boolean): CallTracer {
    return { traceCall: (call, scope, run) => this.#traceCall(call, scope, run, traceArguments) };
  }

  startRequest(
    headers: Record<string, string | string[] | undefined>,
    method: string,
    route: string,
    attributes: SpanAttributes,
  ): { span: Span; context: Context } {
    const parent = propagation.extract(ROOT_CONTEXT, headers, headerGetter);
    const span = this.#sdk.tracer.startSpan(
      `${method} ${route}`,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': method, 'http.route': route, ...attributes } },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  }

  endRequest(span: Span, statusCode: number): void {
    span.setAttribute('http.response.status_code', statusCode);
    if (statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  }

  within<T>(ctx: Context, fn: () => T): T {
    return context.with(ctx, fn);
  }

  async #traceCall<R extends TracedResult>(call: TracedCall, scope: TracedScope, run: () => Promise<R>, traceArguments: boolean): Promise<R> {
    const attributes: SpanAttributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': call.name, 'toolport.format': scope.options.format };
    if (call.id !== null) attributes['gen_ai.tool.call.id'] = call.id;
    if (scope.caller.id !== null) attributes['toolport.caller'] = scope.caller.id;
    if (traceArguments) attributes['gen_ai.tool.call.arguments'] = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments ?? {});
    const span = this.#sdk.tracer.startSpan(`execute_tool ${call.name}`, { kind: SpanKind.INTERNAL, attributes });
    let result: R;
    try {
      result = await context.with(trace.setSpan(context.active(), span), run);
    } catch (err) {
      recordFailure(span, err);
      span.end();
      throw err;
    }
    span.setAttributes({
      'gen_ai.tool.call.id': result.id,
      'toolport.outcome': result.error?.code ?? 'success',
      'toolport.ledger': result.replayed ? 'hit' : result.idempotency_key !== null ? 'miss' : 'none',
    });
    if (result.error !== null) {
      span.setAttributes({ 'toolport.error_code': result.error.code, 'error.type': result.error.code });
      span.addEvent('tool_error', { 'toolport.error_code': result.error.code, ...(traceArguments && { 'toolport.error_detail': result.error.detail }) });
      span.setStatus({ code: SpanStatusCode.ERROR, message: result.error.code });
    }
    span.end();
    return result;
  }

  /** Sets attributes on the active span (the call's `execute_tool`), if there is one. */
  annotate(attributes: SpanAttributes): void {
    trace.getSpan(context.active())?.setAttributes(attributes);
  }

  internal<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
    return this.#around(name, SpanKind.INTERNAL, attributes, fn, []);
  }

  upstream<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
    return this.#around(name, SpanKind.CLIENT, attributes, fn, []);
  }

  linked<T>(link: TraceLink | null, name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
    const links: Link[] = [];
    if (link !== null) {
      const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { ...link }));
      if (linked !== undefined && isSpanContextValid(linked)) links.push({ context: linked });
    }
    return this.#around(name, SpanKind.INTERNAL, attributes, fn, links, ROOT_CONTEXT);
  }

  inject(carrier: Record<string, unknown>): void {
    propagation.inject(context.active(), carrier);
  }

  capture(): TraceLink | null {
    const carrier: Record<string, string> = {};
    propagation.inject(context.active(), carrier);
    return carrier.traceparent === undefined
      ? null
      : { traceparent: carrier.traceparent, ...(carrier.tracestate !== undefined && { tracestate: carrier.tracestate }) };
  }

  logFields(): Record<string, string> {
    const spanContext = trace.getSpan(context.active())?.spanContext();
    return spanContext === undefined || !isSpanContextValid(spanContext) ? {} : { trace_id: spanContext.traceId, span_id: spanContext.spanId };
  }

  flush(): Promise<void> {
    return this.#sdk.flush();
  }

  stop(): Promise<void> {
    return this.#sdk.stop();
  }

  async #around<T>(
    name: string,
    kind: SpanKind,
    attributes: SpanAttributes,
    fn: () => Promise<T>,
    links: Link[],
    parent: Context = context.active(),
  ): Promise<T> {
    const span = this.#sdk.tracer.startSpan(name, { kind, attributes, links }, parent);
    try {
      return await context.with(trace.setSpan(parent, span), fn);
    } catch (err) {
      recordFailure(span, err);
      throw err;
    } finally {
      span.end();
    }
  }
}
