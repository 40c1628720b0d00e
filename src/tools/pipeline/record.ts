/**
 * record: the outermost stage after tracing, so it sees every answer, whichever stage gave it. It
 * records the call's ToolInvoked event in its session when the session stage did not (an unknown
 * tool, invalid arguments, a ledger replay), then counts it in the metrics, writes its log line
 * (level info) and tells the observer (the console's call feed).
 */
import { UNKNOWN_TOOL, type Metrics } from '../../metrics.ts';
import type { InvocationResult } from '../outcome.ts';
import type { InvocationScope, PipelineCall } from './call.ts';
import type { Next, SessionStage, Stage } from './stage.ts';

/** A finished call as its observer sees it. */
export interface FinishedCall {
  /** Epoch ms when it finished. */
  at: number;
  /** Whether the tool exists for this caller (an unknown name is the model's, not a tool's). */
  known: boolean;
  /** The arguments as validated; null when the tool is unknown or they were not JSON. */
  params: unknown;
  result: InvocationResult;
  scope: InvocationScope;
  /** Whether the call reached its handler (or its upstream). */
  ran: boolean;
  /** The policy rule that decided the call (`policy[2]`, `approval`); null when none matched. */
  rule: string | null;
}

export interface RecordOptions {
  session: Pick<SessionStage, 'record'>;
  metrics?: Metrics;
  /** Told of every finished call, after its metrics and log line; must not throw. */
  onCall?: (call: FinishedCall) => void;
}

export function recordStage(options: RecordOptions): Stage {
  return new RecordStage(options);
}

class RecordStage implements Stage {
  readonly name = 'record';
  readonly #options: RecordOptions;

  constructor(options: RecordOptions) {
    this.#options = options;
  }

  async run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    let result = await next();
    if (call.scope.sinks.sessionId !== null && !call.sessionRecorded) result = await this.#options.session.record(call, result);
    const { scope, identity } = call;
    this.#options.metrics?.called(identity.toolHash === null ? UNKNOWN_TOOL : identity.name, result.error?.code ?? 'success', result.duration_ms);
    if (scope.sinks.log.isLevelEnabled('info')) {
      scope.sinks.log.info(
        {
          event: 'ToolInvoked',
          tool: identity.name,
          callId: identity.id,
          session: scope.sinks.sessionId,
          caller: scope.caller.id,
          success: result.success,
          code: result.error?.code ?? null,
          durationMs: result.duration_ms,
        },
        'tool invoked',
      );
    }
    this.#options.onCall?.({ at: Date.now(), known: identity.toolHash !== null, params: call.parsed, result, scope, ran: call.ran, rule: call.rule });
    return result;
  }
}
