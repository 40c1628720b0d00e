/**
 * The lowest CPU priority (nice 19) for a worker whose handler has run past a tick. A spinning
 * handler must not slow the event loop (/healthz, every other call), yet a worker kept at nice 19
 * all the time makes every short call dearer: measured, the main thread's CPU per isolated call
 * rises by tens of microseconds when the worker it wakes and is woken by sits at the lowest
 * priority (docs/design.md, "Isolated handlers"). So workers start at the process's own priority
 * and only a handler still running after one to two ticks (5–10 ms) has its thread set to nice 19.
 * Linux only (a thread's nice value, set by its id, read from the call slots: ./call-slots.ts);
 * elsewhere the workers start at nice 19.
 */
import { setPriority } from 'node:os';
import { startedIn, threadOf } from './call-slots.ts';

/** The lowest CPU priority, for a handler that keeps running. */
export const LOWEST_PRIORITY = 19;
/** How often the calls in flight are looked at: a handler running at two ticks in a row goes to LOWEST_PRIORITY. */
const TICK_MS = 5;

/** Whether the worker threads' priority can be set one by one (Linux: a thread id is a pid to setpriority). */
export const perThreadPriority = process.platform === 'linux';

/**
 * The main side: while calls are in flight, a tick every TICK_MS; a call that was running at the
 * previous tick too has its worker's thread set to LOWEST_PRIORITY. When that call ends, the
 * thread gets the normal priority back where the process may raise it (root, CAP_SYS_NICE);
 * elsewhere it stays at LOWEST_PRIORITY until its worker is replaced.
 */
export class PriorityWatch {
  readonly #slots: Int32Array;
  readonly #inFlight: () => Iterable<number>;
  #timer: NodeJS.Timeout | null = null;
  /** Calls running at the last tick. */
  #running = new Set<number>();
  /** Calls whose thread was lowered, and that thread. */
  readonly #lowered = new Map<number, number>();

  constructor(slots: Int32Array, inFlight: () => Iterable<number>) {
    this.#slots = slots;
    this.#inFlight = inFlight;
  }

  /** A call entered: tick while any is in flight (the timer stops itself at a tick that finds none). */
  watch(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(tick, TICK_MS, this);
    this.#timer.unref();
  }

  tick(): void {
    const slots = this.#slots;
    const running = new Set<number>();
    let any = false;
    for (const seq of this.#inFlight()) {
      any = true;
      if (!startedIn(slots, seq)) continue; // still queued
      const tid = threadOf(slots, seq);
      running.add(seq);
      if (this.#running.has(seq) && tid !== 0) {
        setPriorityOf(tid, LOWEST_PRIORITY); // again at each tick: a cheap call, and a thread id may be reused
        this.#lowered.set(seq, tid);
      }
    }
    this.#running = running;
    if (!any) this.stop();
  }

  /** The call has ended: its thread, if lowered, is raised again where that is allowed. */
  ended(seq: number): void {
    if (this.#lowered.size === 0) return;
    const tid = this.#lowered.get(seq);
    if (tid === undefined) return;
    this.#lowered.delete(seq);
    setPriorityOf(tid, 0);
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#running.clear();
  }
}

function setPriorityOf(tid: number, priority: number): void {
  try {
    setPriority(tid, priority);
  } catch {
    // The thread has ended (its worker was replaced), or raising it is not allowed here.
  }
}

function tick(watch: PriorityWatch): void {
  watch.tick();
}
