/**
 * The seams the dispatcher calls through, implemented elsewhere and handed in by app.ts: the
 * effect ledger's guard (src/ledger/guard.ts), the session runner (src/sessions/runner.ts) and,
 * when tracing, the call tracer (src/tracing/).
 */
import type { Logger } from 'pino';
import type { Cancellation } from './context.ts';
import type { CallIdentity, InvocationResult } from './outcome.ts';
import type { RegisteredTool } from './registry.ts';
import type { SessionHandle, ToolContext } from './types.ts';

/** An idempotent tool's call, as the effect guard needs it. */
export interface GuardedCall {
  tool: RegisteredTool;
  params: Record<string, unknown>;
  identity: CallIdentity;
  sessionId: string | null;
  caller: string | null;
  /** The caller's Idempotency-Key, in place of the derived part of the key. */
  headerKey: string | null;
  deadline: number;
  cancellation: Cancellation | null;
  log: Logger;
}

/** 409: a call holding the same Idempotency-Key is still running. */
export class IdempotencyKeyInFlightError extends Error {
  override name = 'IdempotencyKeyInFlightError';
  constructor(readonly retryAfterS: number) {
    super('a call with this Idempotency-Key is still running; retry after it finishes');
  }
}

/** 422: the Idempotency-Key was first used with other arguments. */
export class IdempotencyKeyReusedError extends Error {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('this Idempotency-Key was used with other arguments; use a new key for a new payload');
  }
}

/** Runs an idempotent tool's call at most once per key, or answers the recorded result instead. */
export interface EffectGuard {
  /**
   * Runs `execute` once per key (handing it the key), or replays, or answers a tool-level failure.
   * `context` is asked for only by a custom key function. Throws only what the HTTP edge answers (409, 422, 503).
   */
  run(call: GuardedCall, execute: (key: string) => Promise<InvocationResult>, context: () => ToolContext): Promise<InvocationResult>;
}

/** A call made in a session (X-Session-Id), as the session runner needs it. */
export interface SessionCall {
  sessionId: string;
  identity: CallIdentity;
  /** The arguments (hashed into the event); null or undefined when there were none to hash. */
  params: unknown;
  caller: string | null;
  parentCallId: string | undefined;
  log: Logger;
}

/** A session call whose handler runs: its tool and its time limit. */
export interface SessionRun extends SessionCall {
  tool: RegisteredTool;
  /** Epoch ms. */
  deadline: number;
  budgetMs: number;
}

/** Runs handlers against staged session state and records each call's ToolInvoked event in the session. */
export interface SessionRunner {
  /** Throws (StoreUnavailableError) at once, without a round trip, when the store is known to be down. */
  assertAvailable(): void;
  /** The session as a handler sees it, staged and never committed (a custom key function's context). */
  view(sessionId: string): SessionHandle;
  /**
   * Runs `attempt` on a fresh staging of the session, then commits its writes (on success) with the
   * call's event; when what it read has changed meanwhile, runs it again until it commits or runs
   * out of attempts or time (then records and answers that failure).
   */
  run(call: SessionRun, attempt: (session: SessionHandle) => Promise<InvocationResult>): Promise<InvocationResult>;
  /** Records the event of a call that staged nothing (it never conflicts). */
  record(call: SessionCall, result: InvocationResult): Promise<InvocationResult>;
}

/** One `execute_tool` span around each call (SPEC §12); handed in only when tracing is on. */
export interface CallTracer {
  traceCall(call: { id: string | null; name: string; arguments: unknown }, scope: { caller: string | null; format?: string }, run: () => Promise<InvocationResult>): Promise<InvocationResult>;
}
