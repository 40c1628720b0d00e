/**
 * How an upstream has answered lately, as this replica's calls saw it: the outcome of the last
 * calls forwarded to it and its last failure. A source with no connection to watch (HTTP,
 * OpenAPI) is known only this way; an MCP server adds it to its connection's state.
 */
import { ToolFailure } from '../../tools/failure.ts';
import type { ToolContext } from '../../tools/types.ts';

/** How many of the latest calls decide the state. */
const WINDOW = 20;
/** This many failures in a row: down. */
const DOWN_AFTER = 3;
const MAX_DETAIL_CHARS = 300;
/** A call ended this close to its deadline ended by it. */
const DEADLINE_SLACK_MS = 10;

export type UpstreamState = 'up' | 'degraded' | 'down' | 'unknown';

export interface UpstreamFailure {
  code: string;
  detail: string;
  at: string;
}

export interface CallHealthView {
  /** unknown: no call has reached it since the start; down: the last calls all failed; degraded: some of the last ones failed. */
  state: UpstreamState;
  /** Calls counted in `state` (the latest ones) and how many of them failed. */
  calls: number;
  failures: number;
  last_error: UpstreamFailure | null;
}

export class CallHealth {
  /** The latest outcomes, true for a failure, oldest first. */
  readonly #recent: boolean[] = [];
  #failuresInRow = 0;
  #lastError: UpstreamFailure | null = null;

  /**
   * Runs one forwarded call and counts its outcome. Unreachable, failing or too slow counts
   * against the upstream; an answer (a refusal or the tool's own error included) counts for it;
   * a call its caller cancelled, or stopped before it was sent, counts for nothing.
   */
  async watch<T>(context: ToolContext, forward: () => Promise<T>): Promise<T> {
    try {
      const answer = await forward();
      this.answered();
      return answer;
    } catch (err) {
      this.settle(context, err);
      throw err;
    }
  }

  /** The upstream answered. */
  answered(): void {
    this.#count(false);
  }

  /** Counts a forwarded call that threw `err`: 'failed' (against the upstream), 'answered' (for it) or 'none'. */
  settle(context: ToolContext, err: unknown): 'failed' | 'answered' | 'none' {
    if (context.signal.aborted) {
      // A timer may fire a millisecond before Date.now() reaches the deadline it was set for.
      if (Date.now() < context.deadline - DEADLINE_SLACK_MS) return 'none';
      this.#failed('deadline_exceeded', 'no answer by the deadline');
      return 'failed';
    }
    if (!(err instanceof ToolFailure)) return 'none';
    if (err.code === 'upstream_unavailable') {
      this.#failed(err.code, err.detail);
      return 'failed';
    }
    this.#count(false); // it answered, with a refusal or the tool's own error
    return 'answered';
  }

  view(): CallHealthView {
    const failures = this.#recent.filter(Boolean).length;
    const state: UpstreamState =
      this.#recent.length === 0 ? 'unknown' : this.#failuresInRow >= Math.min(DOWN_AFTER, this.#recent.length) ? 'down' : failures > 0 ? 'degraded' : 'up';
    return { state, calls: this.#recent.length, failures, last_error: this.#lastError };
  }

  #failed(code: string, detail: string): void {
    this.#lastError = { code, detail: detail.slice(0, MAX_DETAIL_CHARS), at: new Date().toISOString() };
    this.#count(true);
  }

  #count(failed: boolean): void {
    this.#recent.push(failed);
    if (this.#recent.length > WINDOW) this.#recent.shift();
    this.#failuresInRow = failed ? this.#failuresInRow + 1 : 0;
  }
}
