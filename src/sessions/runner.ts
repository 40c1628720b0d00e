/**
 * The session stage of the call pipeline: a call in a session runs its handler on staged session
 * state; its writes commit with the call's ToolInvoked event only if what it read is unchanged
 * (optimistic concurrency), else the rest of the pipeline runs again. Calls without a session pass on.
 */
import type { Metrics } from '../metrics.ts';
import { ownedSessionId, ownedSessions } from '../store/owned-sessions.ts';
import type { SessionCommit, Store } from '../store/types.ts';
import { hashJson } from '../tools/hash.ts';
import { explain } from '../tools/explain.ts';
import { failure, type InvocationResult } from '../tools/outcome.ts';
import type { Next, PipelineCall, SessionStage } from '../tools/pipeline/index.ts';
import type { SessionHandle } from '../tools/types.ts';
import { withSpan } from '../tracing/index.ts';
import { KeyedLock } from './lock.ts';
import { StagedSession } from './staged.ts';

/** Attempts of a handler whose session writes keep conflicting with other calls' (bounded by the deadline too). */
const MAX_SESSION_ATTEMPTS = 32;
const NOTHING_STAGED: Pick<SessionCommit, 'reads' | 'writes'> = { reads: new Map(), writes: new Map() };
/** Outcomes that must answer at once, without waiting for the store to record their event. */
const LATE_CODES = new Set(['deadline_exceeded', 'cancelled']);

export class StagedSessionRunner implements SessionStage {
  readonly name = 'session';
  readonly #store: Store;
  readonly #metrics: Metrics | undefined;
  /** Retries after a session conflict run one at a time per session here; replicas race by version. */
  readonly #retries = new KeyedLock();

  constructor(store: Store, metrics?: Metrics) {
    this.#store = store;
    this.#metrics = metrics;
  }

  /** The session as a handler sees it, staged and never committed (a custom key function's context). */
  view(sessionId: string, owner: string | null): SessionHandle {
    return new StagedSession(ownedSessions(this.#store, owner), sessionId);
  }

  run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    const sessionId = call.scope.sinks.sessionId;
    return sessionId === null ? next() : this.#run(call, sessionId, next);
  }

  /**
   * Runs the rest on a fresh staging of the session, then commits its writes (on success) with the
   * call's event; when what it read has changed meanwhile, runs it again until it commits or runs
   * out of attempts or time (then records and answers that failure).
   */
  async #run(call: PipelineCall, sessionId: string, next: Next): Promise<InvocationResult> {
    let result = await this.#attempt(call, sessionId, next);
    for (let attempts = 1; result === null; attempts++) {
      const { tool, identity, scope } = call;
      if (attempts >= MAX_SESSION_ATTEMPTS || Date.now() >= call.deadline) {
        const [message, detail] = attempts >= MAX_SESSION_ATTEMPTS ? explain.sessionContended(tool, attempts) : explain.deadline(tool, call.budgetMs);
        const code = attempts >= MAX_SESSION_ATTEMPTS ? 'handler_error' : 'deadline_exceeded';
        return this.record(call, failure(identity, code, message, detail));
      }
      scope.sinks.log.debug(
        { tool: tool.name, callId: identity.id, session: sessionId, attempt: attempts + 1 },
        'the session changed under the call: running it again',
      );
      this.#metrics?.sessionConflict(tool.name);
      result = await this.#retries.run(ownedSessionId(scope.caller.id, sessionId), () => this.#attempt(call, sessionId, next));
    }
    return result;
  }

  /** Records the event of a call that staged nothing (it never conflicts). */
  async record(call: PipelineCall, result: InvocationResult): Promise<InvocationResult> {
    return (await this.#commit(call, result, NOTHING_STAGED)) ?? result; // nothing read: never a conflict
  }

  /** One run of the rest on fresh reads, then its commit (null: the session changed). */
  async #attempt(call: PipelineCall, sessionId: string, next: Next): Promise<InvocationResult | null> {
    const session = new StagedSession(ownedSessions(this.#store, call.scope.caller.id), sessionId);
    call.session = session;
    const result = await next();
    return this.#commit(call, result, session.close());
  }

  /**
   * Records the ToolInvoked event in the session, committed with its staged writes (only on
   * success). Answers null, recording nothing, when the session changed under the handler.
   */
  async #commit(call: PipelineCall, result: InvocationResult, staged: Pick<SessionCommit, 'reads' | 'writes'>): Promise<InvocationResult | null> {
    const { identity, parsed: params, scope } = call;
    const sessionId = scope.sinks.sessionId!;
    const event = {
      type: 'ToolInvoked',
      tool: identity.name.slice(0, 128), // an unknown name can be as long as the body
      call_id: identity.id,
      ...(scope.options.parentCallId && { parent_call_id: scope.options.parentCallId }),
      arguments_hash: params === null || params === undefined ? null : hashJson(params),
      success: result.success,
      error_code: result.error?.code ?? null,
      duration_ms: result.duration_ms,
      at: new Date().toISOString(),
      caller: scope.caller.id,
      ...(result.guardrails !== undefined && { guardrails: result.guardrails }),
    };
    // Reads matter only to a call that writes: a read-only call never conflicts.
    const writes = result.success ? staged.writes : NOTHING_STAGED.writes;
    const reads = writes.size > 0 ? staged.reads : NOTHING_STAGED.reads;
    const commit = withSpan('session commit', { 'toolport.session.writes': writes.size }, () =>
      ownedSessions(this.#store, scope.caller.id).commitSession(sessionId, { reads, writes, event: JSON.stringify(event) }),
    );
    if (LATE_CODES.has(result.error?.code ?? '')) {
      // Out of time (or caller gone): answer now; the lone event lands when the store answers.
      commit.catch((err: unknown) => scope.sinks.log.warn({ err, callId: identity.id }, 'the event of a call that ran out of time was not recorded'));
    } else if (!(await commit)) return null;
    call.sessionRecorded = true;
    return result;
  }
}
