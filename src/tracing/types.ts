/** The plain shapes tracing shares with the rest of the code (./index.ts re-exports them). */

/** A request's trace context as plain JSON (W3C Trace Context), to be stored with a task and linked when it runs. */
export interface TraceLink {
  traceparent: string;
  tracestate?: string;
}

export type SpanAttributes = Record<string, string | number | boolean>;

/**
 * What the service's parts use of tracing, handed to each of them (the ledger, sessions, tasks,
 * approvals, guardrails, the log mixin); `NO_TRACING` when tracing is off.
 */
export interface Tracer {
  /** A child span of the active one around `fn` (the ledger's and the session's store work). */
  internal<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** Sets attributes on the active span (an approval's id and status on the call's span). */
  annotate(attributes: SpanAttributes): void;
  /** The active span's context as plain JSON, to store with a task; null when not tracing. */
  capture(): TraceLink | null;
  /** A new root span named `name`, linked to the request that created a task, with `fn` inside it. */
  linked<T>(link: TraceLink | null, name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** `trace_id` and `span_id` of the active span, for a pino mixin. */
  logFields(): Record<string, string>;
}
