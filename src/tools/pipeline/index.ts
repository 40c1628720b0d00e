/**
 * The call pipeline: every call — HTTP invoke and turns, tasks, /mcp, a handler's nested
 * `context.invoke` — runs this one list of stages, in this order (docs/design.md draws it):
 *
 *   trace → record → lookup → validate → [guardrails in] → scope → [policy] → [credentials] → [redaction] → ledger → session → [guardrails out] → handler
 *
 * Each stage is one module with one shape (./stage.ts): it answers the call itself, or calls
 * `next()` and may look at the result. A stage that is not configured is not in the list, so it
 * costs nothing. Adding a stage is one file and one line below; a stage built above tools/ (the
 * ledger, the sessions, policy, credentials) is handed in through PipelineOptions.
 */
import type { Metrics } from '../../metrics.ts';
import type { ResultKeeper } from '../../store/results.ts';
import type { InvocationResult } from '../outcome.ts';
import type { ToolRegistry } from '../registry.ts';
import type { PipelineCall } from './call.ts';
import { handlerStage } from './handler.ts';
import { lookupStage } from './lookup.ts';
import { recordStage, type FinishedCall } from './record.ts';
import { scopeStage } from './scope.ts';
import type { SessionStage, Stage } from './stage.ts';
import type { CallTracer } from '../../tracing/index.ts';
import { traceStage } from './trace.ts';
import { validateStage } from './validate.ts';

export interface PipelineOptions {
  registry: ToolRegistry;
  defaultTimeoutMs: number;
  /** Throws (StoreUnavailable) at once when the store is known to be down (a session call). */
  store: { assertAvailable(): void };
  /** The guardrails (docs/guardrails.md): the arguments checked after validation, the result before the session and the ledger record it. */
  guardrails?: { input: Stage; output: Stage };
  /** Between validation and the ledger: decides whether the call may run (allow, deny, hold for approval). */
  policy?: Stage;
  /** After policy, before the ledger: puts the caller's credential for the tool's upstream on the call, or answers that one is needed. */
  credentials?: Stage;
  /** After credentials: hands the handler stage what replaces known secrets in the handler's answer (src/redaction/). */
  redaction?: Stage;
  /** Runs an idempotent tool's call once per key (the effect ledger, src/ledger/guard.ts). */
  ledger: Stage;
  /** Runs a call in a session against its staged state, and records its event there (src/sessions/runner.ts). */
  session: SessionStage;
  /** Keeps the whole of a content that will be cut (docs/large-results.md); absent: the rest is dropped. */
  results?: ResultKeeper;
  metrics?: Metrics;
  /** One `execute_tool` span per call when tracing (docs/tracing.md); absent or null = no span work at all. */
  tracing?: CallTracer | null;
  /** Told of every finished call, after its metrics and log line (the console's call feed); must not throw. */
  onCall?: (call: FinishedCall) => void;
}

/** The stages of a call, outermost first; the last one (handler) answers without `next`. */
export function pipelineStages(o: PipelineOptions): Stage[] {
  const stages: (Stage | null | undefined)[] = [
    o.tracing == null ? null : traceStage(o.tracing),
    recordStage({ session: o.session, ...(o.metrics && { metrics: o.metrics }), ...(o.onCall && { onCall: o.onCall }) }),
    lookupStage(o.registry),
    validateStage(),
    o.guardrails?.input,
    scopeStage(o),
    o.policy,
    o.credentials,
    o.redaction,
    o.ledger,
    o.session,
    o.guardrails?.output,
    handlerStage(o),
  ];
  return stages.filter((stage) => stage != null);
}

function pastTheEnd(): Promise<InvocationResult> {
  throw new Error('the last stage of the pipeline called next()');
}

/**
 * The stages as one function of a call. Each stage's `next` is an arrow made when the stage runs:
 * a few small closures per call, no array copies, no bind.
 */
export function composeStages(stages: readonly Stage[]): (call: PipelineCall) => Promise<InvocationResult> {
  const last = stages.length - 1;
  const at = (index: number, call: PipelineCall): Promise<InvocationResult> =>
    stages[index]!.run(call, index === last ? pastTheEnd : () => at(index + 1, call));
  return (call) => at(0, call);
}

export type { Next, SessionStage, Stage } from './stage.ts';
export {
  OPEN_CALLER,
  PipelineCall,
  type CallEnvironment,
  type CallerIdentity,
  type CallOptions,
  type CallSinks,
  type InvocationScope,
  type Redaction,
  type RunKey,
  type ToolCall,
  type ToolsetRef,
} from './call.ts';
export type { FinishedCall } from './record.ts';
