/** trace: one `execute_tool` span around the whole call (docs/tracing.md); in the list only when tracing. */
import type { CallTracer } from '../../tracing/index.ts';
import type { Stage } from './stage.ts';

export function traceStage(tracer: CallTracer): Stage {
  return {
    name: 'trace',
    run: (call, next) => tracer.traceCall(call.call, call.scope, next),
  };
}
