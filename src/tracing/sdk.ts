/**
 * The OpenTelemetry Node SDK, configured by its own OTEL_* variables (exporter, endpoint,
 * protocol — http/protobuf by default —, headers, sampler, propagators, resource), with the
 * undici instrumentation so every request made through undici or `fetch` (HTTP tools, MCP
 * servers over HTTP) gets a client span and carries `traceparent`. Only traces: no SDK metrics
 * (Prometheus has them) or logs (pino writes them). Imported only when tracing starts.
 */
import { context, propagation, trace, type Tracer } from '@opentelemetry/api';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { NodeSDK, resources } from '@opentelemetry/sdk-node';

export interface RunningSdk {
  tracer: Tracer;
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export async function startSdk(version: string): Promise<RunningSdk> {
  const undici = new UndiciInstrumentation({ requireParentforSpans: true });
  // service.name defaults to toolport; OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (read by the
  // SDK's environment detector, merged over this) still win.
  const resource = resources.defaultResource().merge(resources.resourceFromAttributes({ 'service.name': 'toolport', 'service.version': version }));
  const sdk = new NodeSDK({ resource, instrumentations: [undici], metricReaders: [], logRecordProcessors: [] });
  sdk.start();
  const provider = trace.getTracerProvider() as { getDelegate?: () => { forceFlush?: () => Promise<void> } };
  return {
    tracer: trace.getTracer('toolport', version),
    // Export is best effort: a collector that is down must not fail a close or a shutdown.
    flush: async () => {
      await provider
        .getDelegate?.()
        .forceFlush?.()
        ?.catch(() => undefined);
    },
    stop: async () => {
      undici.disable();
      await sdk.shutdown().catch(() => undefined);
      // Unregistered, so a later start in the same process (tests) registers afresh.
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}
