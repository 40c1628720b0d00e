/**
 * Event-loop protection for handlers that run in process (docs/operations.md, "Event loop"): a
 * timer measures how late it fires; past MAX_EVENT_LOOP_DELAY_MS the routes that start calls answer
 * 503 with Retry-After instead of queueing more work behind a loop that is not turning.
 *
 * Not @fastify/under-pressure: its hook runs on every route and refuses them all, /healthz and
 * /metrics included; here the one check rides the hook every request already passes (src/app/http.ts)
 * and only new calls are refused. The lag also goes to /metrics (toolport_event_loop_lag_seconds).
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route starts tool calls: refused with 503 while the event loop lags (src/app/http.ts). */
    startsCalls?: boolean;
  }
}

/** How often the loop is sampled: the timer's own lateness is the lag. */
const TICK_MS = 50;
/** The lag reported is the worst of this window and the one before it, so a long stall is seen for 1–2 windows. */
const WINDOW_MS = 1000;
/** What Retry-After says while overloaded: about how long the lag stays reported after the loop recovers. */
export const OVERLOADED_RETRY_AFTER_S = 2;

export class EventLoopGuard {
  readonly maxMs: number;
  /** The worst lag in the current window and the one before, in ms. */
  lagMs = 0;
  /** Whether new calls are refused now. */
  overloaded = false;
  #timer: NodeJS.Timeout | null = null;
  #last = 0;
  #windowStart = 0;
  #current = 0;
  #previous = 0;

  /** `maxMs`: MAX_EVENT_LOOP_DELAY_MS; 0 measures the lag without ever refusing. */
  constructor(maxMs: number) {
    this.maxMs = maxMs;
  }

  /** Starts measuring: once the app is ready, so the start's own work is not taken for lag. */
  start(): void {
    if (this.#timer !== null) return;
    this.#last = this.#windowStart = performance.now();
    this.#timer = setInterval(() => this.#tick(), TICK_MS);
    this.#timer.unref();
  }

  close(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  #tick(): void {
    const now = performance.now();
    const delay = Math.max(0, now - this.#last - TICK_MS);
    this.#last = now;
    if (delay > this.#current) this.#current = delay;
    if (now - this.#windowStart >= WINDOW_MS) {
      this.#previous = this.#current;
      this.#current = 0;
      this.#windowStart = now;
    }
    this.lagMs = Math.max(this.#previous, this.#current);
    this.overloaded = this.maxMs > 0 && this.lagMs > this.maxMs;
  }
}
