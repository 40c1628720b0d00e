/**
 * The dispatcher's session runner: a handler runs on staged session state; its writes commit with the
 * call's ToolInvoked event only if what it read is unchanged (optimistic concurrency), else it runs again.
 */
import type { Metrics } from '../metrics.ts';
import type { SessionCommit, Store } from '../store/types.ts';
import { hashJson } from '../tools/hash.ts';
import { explain, failure, type InvocationResult } from '../tools/outcome.ts';
import type { SessionCall, SessionRun, SessionRunner } from '../tools/seams.ts';
import type { SessionHandle } from '../tools/types.ts';
import { withSpan } from '../tracing/index.ts';
import { KeyedLock } from './lock.ts';
import { StagedSession } from './staged.ts';

/** Attempts of a handler whose session writes keep conflicting with other calls' (bounded by the deadline too). */
const MAX_SESSION_ATTEMPTS = 32;
const NOTHING_STAGED: Pick<SessionCommit, 'reads' | 'writes'> = { reads: new Map(), writes: new Map() };
/** Outcomes that must answer at once, without waiting for the store to record their event. */
const LATE_CODES = new Set(['deadline_exceeded', 'cancelled']);

export class StagedSessionRunner implements SessionRunner {
  readonly #store: Store;
  readonly #maxContentChars: number;
  readonly #metrics: Metrics | undefined;
  /** Retries after a session conflict run one at a time per session here; replicas race by version. */
  readonly #retries = new KeyedLock();

  constructor(store: Store, maxContentChars: number, metrics?: Metrics) {
    this.#store = store;
    this.#maxContentChars = maxContentChars;
    this.#metrics = metrics;
  }

  assertAvailable(): void {
    this.#store.assertAvailable();
  }

  view(sessionId: string): SessionHandle {
    return new StagedSession(this.#store, sessionId);
  }

  async run(call: SessionRun, attempt: (session: SessionHandle) => Promise<InvocationResult>): Promise<InvocationResult> {
    let result = await this.#attempt(call, attempt);
    for (let attempts = 1; result === null; attempts++) {
      if (attempts >= MAX_SESSION_ATTEMPTS || Date.now() >= call.deadline) {
        const [message, detail] = attempts >= MAX_SESSION_ATTEMPTS ? explain.sessionContended(call.tool, attempts) : explain.deadline(call.tool, call.budgetMs);
        const code = attempts >= MAX_SESSION_ATTEMPTS ? 'handler_error' : 'deadline_exceeded';
        return this.record(call, failure(call.identity, code, message, detail, this.#maxContentChars));
      }
      call.log.debug({ tool: call.tool.name, callId: call.identity.id, session: call.sessionId, attempt: attempts + 1 }, 'the session changed under the call: running it again');
      this.#metrics?.sessionConflict(call.tool.name);
      result = await this.#retries.run(call.sessionId, () => this.#attempt(call, attempt));
    }
    return result;
  }

  async record(call: SessionCall, result: InvocationResult): Promise<InvocationResult> {
    return (await this.#commit(call, result, NOTHING_STAGED)) ?? result; // nothing read: never a conflict
  }

  /** One run of the handler on fresh reads, then its commit (null: the session changed). */
  async #attempt(call: SessionRun, attempt: (session: SessionHandle) => Promise<InvocationResult>): Promise<InvocationResult | null> {
    const session = new StagedSession(this.#store, call.sessionId);
    const result = await attempt(session);
    return this.#commit(call, result, session.close());
  }

  /**
   * Records the ToolInvoked event in the session, committed with its staged writes (only on
   * success). Answers null, recording nothing, when the session changed under the handler.
   */
  async #commit(call: SessionCall, result: InvocationResult, staged: Pick<SessionCommit, 'reads' | 'writes'>): Promise<InvocationResult | null> {
    const { identity, params } = call;
    const event = {
      type: 'ToolInvoked',
      tool: identity.name.slice(0, 128), // an unknown name can be as long as the body
      call_id: identity.id,
      ...(call.parentCallId && { parent_call_id: call.parentCallId }),
      arguments_hash: params === null || params === undefined ? null : hashJson(params),
      success: result.success,
      error_code: result.error?.code ?? null,
      duration_ms: result.duration_ms,
      at: new Date().toISOString(),
      caller: call.caller,
    };
    // Reads matter only to a call that writes: a read-only call never conflicts.
    const writes = result.success ? staged.writes : NOTHING_STAGED.writes;
    const reads = writes.size > 0 ? staged.reads : NOTHING_STAGED.reads;
    const commit = withSpan('session commit', { 'toolport.session.writes': writes.size }, () =>
      this.#store.commitSession(call.sessionId, { reads, writes, event: JSON.stringify(event) }),
    );
    if (LATE_CODES.has(result.error?.code ?? '')) {
      // Out of time (or caller gone): answer now; the lone event lands when the store answers.
      commit.catch((err: unknown) => call.log.warn({ err, callId: identity.id }, 'the event of a call that ran out of time was not recorded'));
    } else if (!(await commit)) return null;
    return result;
  }
}
