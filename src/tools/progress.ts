/**
 * Progress reports of one call, thinned for the wire: only increasing `done` values pass (MCP
 * requires progress to increase, and a nested call's own counts must not make it go back), and at
 * most one report per interval goes out; the latest held back is sent by `flush()` before the result.
 */

export type ProgressListener = (callId: string, done: number, total: number | undefined) => void;

export interface ProgressReport {
  done: number;
  total: number | undefined;
}

export const PROGRESS_INTERVAL_MS = 100;

export class ProgressThrottle {
  readonly #emit: (report: ProgressReport) => void;
  readonly #intervalMs: number;
  #last = -Infinity;
  #lastSentAt = -Infinity;
  #pending: ProgressReport | null = null;
  #timer: NodeJS.Timeout | null = null;
  #closed = false;

  constructor(emit: (report: ProgressReport) => void, intervalMs = PROGRESS_INTERVAL_MS) {
    this.#emit = emit;
    this.#intervalMs = intervalMs;
  }

  report(done: number, total: number | undefined): void {
    if (this.#closed || !Number.isFinite(done) || done <= this.#last) return;
    if (total !== undefined && !Number.isFinite(total)) total = undefined;
    this.#last = done;
    this.#pending = { done, total };
    const wait = this.#lastSentAt + this.#intervalMs - performance.now();
    if (wait <= 0) this.#send();
    else this.#timer ??= setTimeout(() => this.#send(), wait);
  }

  /** Sends what is held back (before the result goes out). */
  flush(): void {
    if (!this.#closed) this.#send();
  }

  /** No report goes out after this. */
  close(): void {
    this.#closed = true;
    this.#pending = null;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #send(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    const report = this.#pending;
    if (report === null) return;
    this.#pending = null;
    this.#lastSentAt = performance.now();
    this.#emit(report);
  }
}
