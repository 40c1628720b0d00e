/**
 * handler: the last stage. Runs the tool's handler under the call's deadline and the caller's
 * cancellation, and turns what it returned or threw into the call's result: checked against the
 * tool's result contract, its text made ready to render, and, when its content will be cut, kept whole.
 */
import type { ResultKeeper, ResultRef } from '../../store/results.ts';
import type { CallContext } from '../context.ts';
import { AuthorizationRequired, InputRequired, ToolFailure, WaitsForPerson } from '../failure.ts';
import { explain } from '../explain.ts';
import {
  authorizationRequired,
  failure,
  invocationResult,
  reasonOf,
  RESULT_TEXT,
  type CallIdentity,
  type InvocationResult,
  type ResultParts,
} from '../outcome.ts';
import { settle, type Settled } from '../race.ts';
import { wholeIfCut } from '../render.ts';
import { announceSession, checkResult } from '../result.ts';
import type { PipelineCall, Redaction } from './call.ts';
import type { Stage } from './stage.ts';
import { StoreUnavailable } from '../../errors.ts';

export interface HandlerOptions {
  /** Keeps the whole of a content that will be cut (docs/large-results.md); absent: the rest is dropped. */
  results?: ResultKeeper;
}

export function handlerStage(options: HandlerOptions): Stage {
  return new HandlerStage(options);
}

/** What the handler answered or threw with the known secrets replaced, before it is logged, kept or rendered. */
function redacted(settled: Settled, redaction: Redaction | null): Settled {
  if (redaction === null) return settled;
  if (settled.kind === 'returned') return { kind: 'returned', value: redaction.value(settled.value) };
  if (settled.kind === 'threw' && settled.error instanceof Error) {
    const error = settled.error as Error & { detail?: unknown };
    error.message = redaction.text(error.message);
    if (error.stack !== undefined) error.stack = redaction.text(error.stack);
    if (typeof error.detail === 'string') error.detail = redaction.text(error.detail);
  }
  return settled;
}

class HandlerStage implements Stage {
  readonly name = 'handler';
  readonly #results: ResultKeeper | undefined;

  constructor({ results }: HandlerOptions) {
    this.#results = results;
  }

  async run(call: PipelineCall): Promise<InvocationResult> {
    const { tool, params, identity, scope } = call;
    const context = call.context(call.session);
    call.ran = true;
    const settled = redacted(await settle(() => tool.handler(params, context), context, scope.options.cancellation, tool.heartbeatMs), call.redaction);
    if (settled.kind === 'stalled') {
      context.log.warn({ heartbeatMs: tool.heartbeatMs }, 'tool handler stopped beating: aborted as stuck');
      return failure(identity, 'deadline_exceeded', ...explain.stalled(tool, tool.heartbeatMs!));
    }
    if (settled.kind === 'deadline' || settled.kind === 'cancelled') {
      const [message, detail] = settled.kind === 'deadline' ? explain.deadline(tool, call.budgetMs) : explain.cancelled(tool);
      return failure(identity, settled.kind === 'deadline' ? 'deadline_exceeded' : 'cancelled', message, detail);
    }
    if (settled.kind === 'threw') return this.#thrown(call, context, settled.error);
    const checked = checkResult(tool, settled.value);
    if (typeof checked === 'string') {
      context.log.warn({ problem: checked }, 'tool returned an invalid result');
      const [message, detail] = explain.resultInvalid(tool, checked);
      return failure(identity, 'result_invalid', message, detail);
    }
    const { message, value, success, exclude, valueJson, attachments } = call.announceSession
      ? announceSession(checked, scope.sinks.sessionId!, call.announceSession === 'hint')
      : checked;
    const error = success ? null : { code: 'tool_failed' as const, detail: message };
    const parts: ResultParts = {
      success,
      message,
      value,
      excludeValue: exclude,
      valueJson,
      error,
      toolHash: tool.hash,
      attachments,
      limit: tool.maxContentChars,
    };
    const result = invocationResult(identity, parts);
    const whole = this.#results === undefined ? null : wholeIfCut(result[RESULT_TEXT], this.#results.maxContentChars);
    if (whole === null) return result;
    const kept = await this.#keepWhole(call, whole);
    return kept === null ? result : invocationResult(identity, { ...parts, kept });
  }

  #thrown({ tool, identity }: PipelineCall, context: CallContext, error: unknown): InvocationResult {
    if (error instanceof StoreUnavailable) throw error;
    // context.credentials.get of a credential the user has not connected.
    if (error instanceof AuthorizationRequired) return authorizationRequired(identity, error);
    // context.elicit or context.sample of a call that is asked by running it again with the answers.
    if (error instanceof InputRequired) {
      const result = failure(identity, 'input_required', `${tool.name} waits for its caller's client to answer`, 'the call asked its client');
      result.input_requests = error.requests;
      return result;
    }
    if (error instanceof WaitsForPerson) return waitingAsNested(identity, error.nested);
    if (error instanceof ToolFailure) {
      context.log.warn({ code: error.code, detail: error.detail }, 'tool failed');
      return failure(identity, error.code, error.message, error.detail, error.retryAfterS);
    }
    context.log.warn({ err: error }, 'tool handler threw');
    const [message, detail] = explain.handlerError(tool, reasonOf(error));
    return failure(identity, 'handler_error', message, detail);
  }

  /** Keeps a cut content whole for its caller; a store that is down loses the rest, not the call. */
  async #keepWhole({ scope, identity }: PipelineCall, content: string): Promise<ResultRef | null> {
    try {
      return await this.#results!.keep({ caller: scope.caller.id, tool: identity.name, callId: identity.id, content });
    } catch (err) {
      if (!(err instanceof StoreUnavailable)) throw err;
      scope.sinks.log.warn({ err, callId: identity.id }, 'the whole of a cut result could not be kept: the store is unreachable');
      return null;
    }
  }
}

/** This call's failure, the nested call's code, message, approval, link and input requests. */
function waitingAsNested(identity: CallIdentity, nested: InvocationResult): InvocationResult {
  const error = nested.error ?? { code: 'handler_error' as const, detail: 'a nested call waits' };
  const result = failure(identity, error.code, nested.message, error.detail);
  if (nested.approval !== undefined) result.approval = nested.approval;
  if (nested.authorization !== undefined) result.authorization = nested.authorization;
  if (nested.input_requests !== undefined) result.input_requests = nested.input_requests;
  return result;
}
