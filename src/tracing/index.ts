/**
 * OpenTelemetry tracing (docs/tracing.md), off unless an OTLP endpoint is configured by OpenTelemetry's
 * own variables. This module loads none of OpenTelemetry: the SDK and the span code
 * (./runtime.ts, ./sdk.ts) are imported only when tracing starts, so a process that does not
 * trace pays one null check per helper call. Any folder may import this module.
 */
import type { TracingRuntime } from './runtime.ts';
import type { SpanAttributes, TraceLink } from './types.ts';

export type { CallTracer, RequestTracer } from './runtime.ts';
export type { SpanAttributes, TraceLink } from './types.ts';

/** The process's tracing, once started (OpenTelemetry's providers are process-wide). */
let runtime: TracingRuntime | null = null;
let starting: Promise<TracingRuntime> | null = null;

/** Starts the SDK (reading OTEL_* from process.env; `version` is service.version) once per process; later calls get the same runtime. */
export function startTracing(version: string): Promise<TracingRuntime> {
  starting ??= (async () => {
    const { TracingRuntime } = await import('./runtime.ts');
    const { startSdk } = await import('./sdk.ts');
    runtime = new TracingRuntime(await startSdk(version));
    return runtime;
  })();
  return starting;
}

/** Flushes and stops the SDK (the process is ending, or a test is done with tracing). */
export async function stopTracing(): Promise<void> {
  const stopping = runtime;
  runtime = null;
  starting = null;
  await stopping?.stop();
}

/** Exports the spans ended so far (an app closing, a test about to look at its receiver). */
export async function flushTracing(): Promise<void> {
  await runtime?.flush();
}

/** The running tracing, or null (what app.ts hands to the dispatcher and the HTTP hooks). */
export function activeTracing(): TracingRuntime | null {
  return runtime;
}

/** `trace_id` and `span_id` of the active span, for a pino mixin; nothing when not tracing. */
export function traceLogFields(): Record<string, string> {
  return runtime === null ? {} : runtime.logFields();
}

/**
 * A CLIENT span around an upstream call that no instrumentation sees (an MCP server over stdio),
 * child of the active span; an error thrown by `fn` is recorded on it. Not tracing: `fn()`.
 */
export function withUpstreamSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return runtime === null ? fn() : runtime.upstream(name, attributes, fn);
}

/** Sets attributes on the active span (an approval's id and status on the call's span). Not tracing: nothing. */
export function annotateSpan(attributes: SpanAttributes): void {
  runtime?.annotate(attributes);
}

/** A child span of the active one around `fn` (the ledger's and the session's store work). Not tracing: `fn()`. */
export function withSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return runtime === null ? fn() : runtime.internal(name, attributes, fn);
}

/** Adds `traceparent` (and `tracestate`) of the active span to `carrier`, e.g. an MCP request's `_meta`. */
export function injectTraceContext<T extends Record<string, unknown>>(carrier: T): T {
  if (runtime !== null) runtime.inject(carrier);
  return carrier;
}

/** The active span's context as plain JSON, to store with a task; null when not tracing. */
export function captureTraceLink(): TraceLink | null {
  return runtime === null ? null : runtime.capture();
}

/**
 * Runs a task: a new root span named `name`, linked to the request that created the task, with
 * `fn` inside it (so the dispatcher's spans are its children). Not tracing: `fn()`.
 */
export function runLinked<T>(link: TraceLink | null, name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return runtime === null ? fn() : runtime.linked(link, name, attributes, fn);
}
