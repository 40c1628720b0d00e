/**
 * Which worker thread runs which call, and the lowest CPU priority (nice 19) for a worker whose
 * handler has run past a tick. A spinning handler must not slow the event loop (/healthz, every
 * other call), yet a worker kept at nice 19 all the time makes every short call dearer: measured,
 * the main thread's CPU per isolated call rises by tens of microseconds when the worker it wakes
 * and is woken by sits at the lowest priority (docs/design.md, "Isolated handlers"). So workers
 * start at the process's own priority and only a handler still running after one to two ticks
 * (10–20 ms) has its thread set to nice 19. Linux only (a thread's own nice value, set by its id);
 * elsewhere the workers start at nice 19 as before.
 *
 * Each worker writes, as a call starts, the call's number and its thread's id into a slot of a
 * shared ring (one Atomics.store each); the main thread reads the slots of its calls in flight
 * at each tick. Nothing else crosses per call.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** The lowest CPU priority, for a handler that keeps running. */
export const LOWEST_PRIORITY = 19;
/** How often the calls in flight are looked at: a handler running at the start of two ticks in a row goes to LOWEST_PRIORITY. */
const TICK_MS = 10;
/** Slots of the ring (a power of two): more than calls can be in flight at once. */
const SLOTS = 4096;

/** Whether the worker threads' priority can be set one by one (Linux: a thread id is a pid to setpriority). */
export const perThreadPriority = process.platform === 'linux';

/** The ring as both sides see it: [call number, thread id] per slot. */
export function priorityRing(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(SLOTS * 2 * Int32Array.BYTES_PER_ELEMENT));
}

/** Whether the call numbered `seq` has started its handler in a worker (its module imported). */
export function startedIn(ring: Int32Array, seq: number): boolean {
  return Atomics.load(ring, (seq & (SLOTS - 1)) * 2) === (seq | 0);
}

/** The worker side: its thread's id once (0 when unknown), then one slot written per call. */
export class StartedCalls {
  readonly #ring: Int32Array | null;
  readonly #tid: number;

  constructor(ring: Int32Array | null) {
    this.#tid = ring === null ? 0 : ownThreadId();
    this.#ring = this.#tid === 0 ? null : ring;
  }

  started(seq: number): void {
    const ring = this.#ring;
    if (ring === null) return;
    const slot = (seq & (SLOTS - 1)) * 2;
    Atomics.store(ring, slot + 1, this.#tid);
    Atomics.store(ring, slot, seq | 0);
  }
}

/** This thread's id, from /proc/thread-self (`<pid>/task/<tid>`); 0 when there is none. */
function ownThreadId(): number {
  try {
    return Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/**
 * The main side: while calls are in flight, a tick every TICK_MS; a call that was running at the
 * previous tick too has its worker's thread set to LOWEST_PRIORITY. A thread stays there (an
 * unprivileged process cannot raise it again) until its worker is replaced.
 */
export class PriorityWatch {
  readonly #ring: Int32Array;
  readonly #inFlight: () => Iterable<number>;
  #timer: NodeJS.Timeout | null = null;
  /** Calls running at the last tick. */
  #running = new Set<number>();

  constructor(ring: Int32Array, inFlight: () => Iterable<number>) {
    this.#ring = ring;
    this.#inFlight = inFlight;
  }

  /** A call entered: tick while any is in flight (the timer stops itself at a tick that finds none). */
  watch(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(tick, TICK_MS, this);
    this.#timer.unref();
  }

  tick(): void {
    const ring = this.#ring;
    const running = new Set<number>();
    let any = false;
    for (const seq of this.#inFlight()) {
      any = true;
      if (!startedIn(ring, seq)) continue; // still queued
      const tid = Atomics.load(ring, (seq & (SLOTS - 1)) * 2 + 1);
      running.add(seq);
      if (this.#running.has(seq)) lower(tid); // again at each tick: a cheap call, and a thread id may be reused
    }
    this.#running = running;
    if (!any) this.stop();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#running.clear();
  }
}

function lower(tid: number): void {
  try {
    setPriority(tid, LOWEST_PRIORITY);
  } catch {
    // The thread has ended (its worker was replaced): nothing to lower.
  }
}

function tick(watch: PriorityWatch): void {
  watch.tick();
}
