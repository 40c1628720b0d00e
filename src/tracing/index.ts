/**
 * OpenTelemetry tracing (docs/tracing.md), off unless an OTLP endpoint is configured by OpenTelemetry's
 * own variables. This module loads none of OpenTelemetry: the SDK and the span code
 * (./runtime.ts, ./sdk.ts) are imported only when tracing starts. The parts that trace receive a
 * `Tracer` (the runtime, or NO_TRACING); only the SDK's start and stop are kept here, because
 * OpenTelemetry's providers are process-wide. Any folder may import this module.
 */
import type { TracingRuntime } from './runtime.ts';
import type { Tracer } from './types.ts';

export type { CallTracer, RequestTracer } from './runtime.ts';
export type { SpanAttributes, TraceLink, Tracer } from './types.ts';

/** The process's SDK, once started (OpenTelemetry's providers are process-wide): for stopping and flushing it only. */
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

/** Tracing when it is off: every span helper runs `fn` and records nothing. */
export const NO_TRACING: Tracer = {
  internal: (_name, _attributes, fn) => fn(),
  annotate: () => {},
  capture: () => null,
  linked: (_link, _name, _attributes, fn) => fn(),
  logFields: () => ({}),
};
