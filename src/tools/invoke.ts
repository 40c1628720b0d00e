/**
 * Dispatch (SPEC §3): lookup → parse arguments → validate → deadline → context → handler →
 * result check → content → ToolInvoked event. Every tool-level failure is a result, never a throw;
 * only a store that cannot be reached escapes, as StoreUnavailableError (503 at the HTTP edge).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { UNKNOWN_TOOL, type Metrics } from '../metrics.ts';
import { deepFreeze } from '../json.ts';
import { KeyedLock } from '../sessions/lock.ts';
import { StagedSession } from '../sessions/staged.ts';
import { StoreUnavailableError, type SessionCommit, type Store } from '../store/types.ts';
import { hashJson } from './hash.ts';
import { elapsedMs, explain, failure, reasonOf, type CallIdentity, type InvocationResult } from './outcome.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import { renderContent } from './render.ts';
import { CallContext, type Cancellation, type NestedCalls } from './context.ts';
import { settle } from './race.ts';
import { ToolFailure } from './failure.ts';
import { checkResult, parseArguments } from './result.ts';
import { LedgerGuard } from '../ledger/guard.ts';
import type { NestedResult } from './types.ts';
import type { ProgressListener } from './progress.ts';

export interface ToolCall {
  id: string | null;
  name: string;
  /** An object, a JSON string (OpenAI, Responses), or absent. */
  arguments: unknown;
  /** The arguments are already a parsed body: a string is a wrong value, not JSON text. */
  parsed?: boolean;
  /** The caller's Idempotency-Key for this call (SPEC §5), already checked by the HTTP edge. */
  idempotencyKey?: string | null;
}

/** Who calls and under which limits; shared by the calls of one request. */
export interface InvocationScope {
  requestId: string;
  sessionId: string | null;
  caller: string | null;
  /** The caller's tool allowlist; a tool it refuses does not exist for this call. Absent = every tool. */
  allows?: (toolName: string) => boolean;
  /** The caller's X-Timeout-Ms, counted from `receivedAt` (epoch ms). */
  timeoutMs: number | null;
  receivedAt: number;
  log: Logger;
  /** Fires when the caller goes away (or, for a nested call, when its parent call ends). */
  cancellation: Cancellation | null;
  parentCallId?: string;
  depth?: number;
  /** Where the handlers' `context.progress` reports go (an SSE or MCP stream); absent = nowhere. */
  progress?: ProgressListener;
}

export interface DispatcherOptions {
  registry: ToolRegistry;
  store: Store;
  defaultTimeoutMs: number;
  maxContentChars: number;
  metrics?: Metrics;
  /** How long an idempotent call's ledger lease lasts unless renewed (it is, while the handler runs). */
  ledgerLeaseMs?: number;
}

/** What every step of one call's execution needs; made once per call. */
interface Execution {
  tool: RegisteredTool;
  /** The validated arguments, frozen. */
  params: Record<string, unknown>;
  identity: CallIdentity;
  scope: InvocationScope;
  /** Epoch ms. */
  deadline: number;
  budgetMs: number;
  /** The ledger key, once the ledger let this call run (idempotent tools only). */
  idempotencyKey: string | null;
}

const MAX_NESTING = 8;
const DEFAULT_LEDGER_LEASE_MS = 10_000;
/** Attempts of a handler whose session writes keep conflicting with other calls' (bounded by the deadline too). */
const MAX_SESSION_ATTEMPTS = 32;
const NOTHING_STAGED: Pick<SessionCommit, 'reads' | 'writes'> = { reads: new Map(), writes: new Map() };
/** Outcomes that must answer at once, without waiting for the store to record their event. */
const LATE_CODES = new Set(['deadline_exceeded', 'cancelled']);

export class Dispatcher implements NestedCalls<InvocationScope> {
  readonly #options: DispatcherOptions;
  /** Retries after a session conflict run one at a time per session here; replicas race by version. */
  readonly #sessionRetries = new KeyedLock();
  readonly #ledger: LedgerGuard;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#ledger = new LedgerGuard(options.store.ledger, options.ledgerLeaseMs ?? DEFAULT_LEDGER_LEASE_MS, options.maxContentChars, options.metrics);
  }

  get registry(): ToolRegistry {
    return this.#options.registry;
  }

  async invoke(call: ToolCall, scope: InvocationScope): Promise<InvocationResult> {
    const startedAt = performance.now();
    const identity: CallIdentity = { id: call.id ?? `call_${randomUUID()}`, name: call.name, toolHash: null, startedAt };
    const max = this.#options.maxContentChars;
    const allows = scope.allows;
    const tool = allows === undefined || allows(call.name) ? this.#options.registry.get(call.name) : undefined;
    if (tool === undefined) {
      const visible = this.#options.registry.list().filter((t) => allows === undefined || allows(t.name));
      const [message, detail] = explain.unknownTool(call.name, visible.map((t) => t.name));
      return this.#finish(scope, identity, null, failure(identity, 'unknown_tool', message, detail, max));
    }
    identity.toolHash = tool.hash;
    let params: unknown;
    try {
      params = call.parsed === true ? call.arguments : parseArguments(call.arguments);
    } catch (err) {
      const [message, detail] = explain.notJson(tool, reasonOf(err));
      return this.#finish(scope, identity, null, failure(identity, 'invalid_arguments', message, detail, max));
    }
    if (!tool.validateParams(params)) {
      const [message, detail] = explain.invalid(tool);
      return this.#finish(scope, identity, params, failure(identity, 'invalid_arguments', message, detail, max));
    }
    // The tool's own limit may be longer than the default; the caller's X-Timeout-Ms can only shorten it.
    const budgetMs = Math.min(scope.timeoutMs ?? Infinity, tool.timeoutMs ?? this.#options.defaultTimeoutMs);
    const deadline = scope.receivedAt + budgetMs;
    if (Date.now() >= deadline) {
      const [message, detail] = explain.deadline(tool, budgetMs);
      return this.#finish(scope, identity, params, failure(identity, 'deadline_exceeded', message, detail, max));
    }
    const run: Execution = { tool, params: deepFreeze(params) as Record<string, unknown>, identity, scope, deadline, budgetMs, idempotencyKey: null };
    if (scope.sessionId !== null) this.#options.store.assertAvailable();
    if (tool.idempotency === null || tool.idempotency.strategy === 'none') return this.#execute(run);
    // An idempotent tool runs through the effect ledger (src/ledger/guard.ts): once per key. The
    // ledger records a success only after its session writes are committed.
    let executed = false;
    const result = await this.#ledger.run(
      { tool, params: run.params, identity, sessionId: scope.sessionId, caller: scope.caller, headerKey: call.idempotencyKey ?? null, deadline, cancellation: scope.cancellation, log: scope.log },
      // Arrows passed in place (not named consts): tsx would wrap a named one in a defineProperty per call.
      (key) => {
        executed = true;
        run.idempotencyKey = key;
        return this.#execute(run);
      },
      () => this.#context(run, scope.sessionId === null ? null : new StagedSession(this.#options.store, scope.sessionId)),
    );
    // A replay, or an answer of the ledger itself (in_progress…), still records the call's event.
    return executed ? result : this.#finish(scope, identity, params, result);
  }

  /** One execution: the handler (re-run on a session conflict), its session writes and its event. */
  #execute(run: Execution): Promise<InvocationResult> {
    return run.scope.sessionId === null ? this.#runAlone(run) : this.#runInSession(run, run.scope.sessionId);
  }

  async #runAlone(run: Execution): Promise<InvocationResult> {
    const result = await this.#run(run, this.#context(run, null));
    return this.#record(run.scope, run.identity, result);
  }

  /** Optimistic concurrency: run, then commit only if what the handler read is unchanged; else run again. */
  async #runInSession(run: Execution, sessionId: string): Promise<InvocationResult> {
    const { tool, identity, scope } = run;
    let result = await this.#attempt(run, sessionId);
    for (let attempts = 1; result === null; attempts++) {
      if (attempts >= MAX_SESSION_ATTEMPTS || Date.now() >= run.deadline) {
        const [message, detail] = attempts >= MAX_SESSION_ATTEMPTS ? explain.sessionContended(tool, attempts) : explain.deadline(tool, run.budgetMs);
        const code = attempts >= MAX_SESSION_ATTEMPTS ? 'handler_error' : 'deadline_exceeded';
        return this.#finish(scope, identity, run.params, failure(identity, code, message, detail, this.#options.maxContentChars));
      }
      scope.log.debug({ tool: tool.name, callId: identity.id, session: sessionId, attempt: attempts + 1 }, 'the session changed under the call: running it again');
      this.#options.metrics?.sessionConflict(tool.name);
      result = await this.#sessionRetries.run(sessionId, () => this.#attempt(run, sessionId));
    }
    return result;
  }

  /** One run of a session call: the handler on fresh reads, then its commit (null: the session changed). */
  async #attempt(run: Execution, sessionId: string): Promise<InvocationResult | null> {
    const session = new StagedSession(this.#options.store, sessionId);
    const result = await this.#run(run, this.#context(run, session));
    return this.#commit(sessionId, run.scope, run.identity, run.params, result, session.close());
  }

  #context({ tool, identity, scope, deadline, idempotencyKey }: Execution, session: StagedSession | null): CallContext {
    return new CallContext({
      callId: identity.id,
      toolName: tool.name,
      requestId: scope.requestId,
      idempotencyKey,
      session,
      deadline,
      sessionId: scope.sessionId,
      caller: scope.caller,
      resources: this.#options.registry.resources,
      log: scope.log,
      calls: this,
      scope,
      progress: scope.progress ?? null,
    });
  }

  async #run({ tool, params, identity, scope, budgetMs }: Execution, context: CallContext): Promise<InvocationResult> {
    const max = this.#options.maxContentChars;
    const settled = await settle(() => tool.handler(params, context), context, scope.cancellation);
    if (settled.kind === 'deadline' || settled.kind === 'cancelled') {
      const [message, detail] = settled.kind === 'deadline' ? explain.deadline(tool, budgetMs) : explain.cancelled(tool);
      return failure(identity, settled.kind === 'deadline' ? 'deadline_exceeded' : 'cancelled', message, detail, max);
    }
    if (settled.kind === 'threw') {
      if (settled.error instanceof StoreUnavailableError) throw settled.error;
      if (settled.error instanceof ToolFailure) {
        context.log.warn({ code: settled.error.code, detail: settled.error.detail }, 'tool failed');
        return failure(identity, settled.error.code, settled.error.message, settled.error.detail, max);
      }
      context.log.warn({ err: settled.error }, 'tool handler threw');
      const [message, detail] = explain.handlerError(tool, reasonOf(settled.error));
      return failure(identity, 'handler_error', message, detail, max);
    }
    const checked = checkResult(tool, settled.value);
    if (typeof checked === 'string') {
      context.log.warn({ problem: checked }, 'tool returned an invalid result');
      const [message, detail] = explain.resultInvalid(tool, checked);
      return failure(identity, 'result_invalid', message, detail, max);
    }
    const { message, value, success, exclude, valueJson } = checked;
    return {
      id: identity.id,
      name: tool.name,
      success,
      message,
      value,
      exclude_value_from_context: exclude,
      error: success ? null : { code: 'tool_failed', detail: message },
      content: renderContent(message, exclude ? null : valueJson, max),
      replayed: false,
      effect_id: null,
      idempotency_key: null,
      tool_hash: tool.hash,
      duration_ms: elapsedMs(identity.startedAt),
    };
  }

  /** A handler's `context.invoke`: the same dispatch, under the parent's deadline and cancellation. */
  async nested(name: string, params: Record<string, unknown>, parent: CallContext, scope: InvocationScope): Promise<NestedResult> {
    const depth = (scope.depth ?? 0) + 1;
    if (depth > MAX_NESTING) {
      return { success: false, message: `Nested tool calls are limited to ${MAX_NESTING} levels.`, value: null, error: { code: 'handler_error', detail: 'nesting limit reached' } };
    }
    const now = Date.now();
    const result = await this.invoke(
      { id: null, name, arguments: params },
      { ...scope, timeoutMs: Math.max(0, parent.deadline - now), receivedAt: now, cancellation: parent.ended, parentCallId: parent.callId, depth },
    );
    return { success: result.success, message: result.message, value: result.value, error: result.error };
  }

  /** Records the ToolInvoked event of a call that wrote nothing to its session (without a session: at once). */
  #finish(scope: InvocationScope, identity: CallIdentity, params: unknown, result: InvocationResult): InvocationResult | Promise<InvocationResult> {
    if (scope.sessionId === null) return this.#record(scope, identity, result);
    return this.#commit(scope.sessionId, scope, identity, params, result, NOTHING_STAGED).then((committed) => committed ?? result); // nothing read: never a conflict
  }

  /**
   * Records the ToolInvoked event in the session, committed with its staged writes (only on
   * success). Answers null, recording nothing, when the session changed under the handler.
   */
  async #commit(
    sessionId: string,
    scope: InvocationScope,
    identity: CallIdentity,
    params: unknown,
    result: InvocationResult,
    staged: Pick<SessionCommit, 'reads' | 'writes'>,
  ): Promise<InvocationResult | null> {
    const event = {
      type: 'ToolInvoked',
      tool: identity.name.slice(0, 128), // an unknown name can be as long as the body
      call_id: identity.id,
      ...(scope.parentCallId && { parent_call_id: scope.parentCallId }),
      arguments_hash: params === null || params === undefined ? null : hashJson(params),
      success: result.success,
      error_code: result.error?.code ?? null,
      duration_ms: result.duration_ms,
      at: new Date().toISOString(),
      caller: scope.caller,
    };
    // Reads matter only to a call that writes: a read-only call never conflicts.
    const writes = result.success ? staged.writes : NOTHING_STAGED.writes;
    const reads = writes.size > 0 ? staged.reads : NOTHING_STAGED.reads;
    const commit = this.#options.store.commitSession(sessionId, { reads, writes, event: JSON.stringify(event) });
    if (LATE_CODES.has(result.error?.code ?? '')) {
      // Out of time (or caller gone): answer now; the lone event lands when the store answers.
      commit.catch((err: unknown) => scope.log.warn({ err, callId: identity.id }, 'the event of a call that ran out of time was not recorded'));
    } else if (!(await commit)) return null;
    return this.#record(scope, identity, result);
  }

  /** The call in the metrics and, at level info, its log line. */
  #record(scope: InvocationScope, identity: CallIdentity, result: InvocationResult): InvocationResult {
    this.#options.metrics?.called(identity.toolHash === null ? UNKNOWN_TOOL : identity.name, result.error?.code ?? 'success', result.duration_ms);
    if (scope.log.isLevelEnabled('info')) {
      scope.log.info(
        { event: 'ToolInvoked', tool: identity.name, callId: identity.id, session: scope.sessionId, caller: scope.caller, success: result.success, code: result.error?.code ?? null, durationMs: result.duration_ms },
        'tool invoked',
      );
    }
    return result;
  }
}
