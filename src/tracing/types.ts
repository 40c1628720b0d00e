/** The plain shapes tracing shares with the rest of the code (./index.ts re-exports them). */

/** A request's trace context as plain JSON (W3C Trace Context), to be stored with a task and linked when it runs. */
export interface TraceLink {
  traceparent: string;
  tracestate?: string;
}

export type SpanAttributes = Record<string, string | number | boolean>;
