/** The one shape of a pipeline stage (see ./index.ts for the list and its order). */
import type { InvocationResult } from '../outcome.ts';
import type { PipelineCall } from './call.ts';

/** The rest of the pipeline after a stage; a stage may call it more than once (a session retry). */
export type Next = () => Promise<InvocationResult>;

/**
 * A stage answers the call itself (a failure, a replay, a denial) without calling `next`, or calls
 * `next()` and may look at or add to its result. Tool-level outcomes are results, never throws;
 * a stage throws only what the HTTP edge answers (409, 422, 503).
 */
export interface Stage {
  /** For readers and traces: 'lookup', 'validate', 'ledger'… */
  readonly name: string;
  run(call: PipelineCall, next: Next): Promise<InvocationResult>;
}

/** The session stage also records the event of a call that never reached it (an unknown tool, a replay). */
export interface SessionStage extends Stage {
  record(call: PipelineCall, result: InvocationResult): Promise<InvocationResult>;
}
