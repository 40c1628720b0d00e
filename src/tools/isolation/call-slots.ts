/**
 * What the main thread and the workers share of each call, without a message: a ring of slots in
 * a SharedArrayBuffer, one per call number (modulo its size). A worker writes, as a handler
 * starts, the call's number and its own thread's id (./priority.ts lowers that thread when the
 * handler keeps running); the main thread writes the number when the caller went away, and a
 * worker that reads it before starting the handler does not start it. One Atomics.store or load
 * per call on each side.
 */
import { readlinkSync } from 'node:fs';

/** Slots of the ring (a power of two): more than calls can be in flight at once. */
const SLOTS = 4096;
/** Per slot: [started call, its thread's id, cancelled call, unused]. */
const STRIDE = 4;

export function callSlots(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(SLOTS * STRIDE * Int32Array.BYTES_PER_ELEMENT));
}

const slotOf = (seq: number) => (seq & (SLOTS - 1)) * STRIDE;

/** Whether the call numbered `seq` has started its handler in a worker (its module imported). */
export function startedIn(slots: Int32Array, seq: number): boolean {
  return Atomics.load(slots, slotOf(seq)) === (seq | 0);
}

/** The thread that runs the call numbered `seq` (when startedIn); 0 where thread ids are unknown. */
export function threadOf(slots: Int32Array, seq: number): number {
  return Atomics.load(slots, slotOf(seq) + 1);
}

/** The caller of the call numbered `seq` went away: a worker that has not started its handler yet does not. */
export function markCancelled(slots: Int32Array, seq: number): void {
  Atomics.store(slots, slotOf(seq) + 2, seq | 0);
}

/** The worker side: its thread's id once (0 when unknown), then one slot read and written per call. */
export class WorkerSlots {
  readonly #slots: Int32Array | null;
  readonly #tid: number;

  constructor(slots: Int32Array | null) {
    this.#slots = slots;
    this.#tid = slots === null ? 0 : ownThreadId();
  }

  /** Marks the call's handler as started; false when its caller went away first (the handler must not start). */
  start(seq: number): boolean {
    const slots = this.#slots;
    if (slots === null) return true;
    const slot = slotOf(seq);
    if (Atomics.load(slots, slot + 2) === (seq | 0)) return false;
    Atomics.store(slots, slot + 1, this.#tid);
    Atomics.store(slots, slot, seq | 0);
    return true;
  }
}

/** This thread's id, from /proc/thread-self (`<pid>/task/<tid>`, Linux); 0 when there is none. */
function ownThreadId(): number {
  try {
    return Number(/task\/(\d+)$/.exec(readlinkSync('/proc/thread-self'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
