/**
 * The handler raced against its deadline, its caller and, for a tool with `heartbeat_ms`, its own
 * beats: whichever ends first decides the call.
 */
import type { CallContext, CancelListener, Cancellation } from './context.ts';

/** `stalled`: the handler went longer than its tool's heartbeat_ms without context.beat(). */
export type Settled =
  { kind: 'returned'; value: unknown } | { kind: 'threw'; error: unknown } | { kind: 'deadline' } | { kind: 'cancelled' } | { kind: 'stalled' };

/** Why a call ended early, as its `ended` Cancellation's reason: the call's deadline, its caller going away, or a missed heartbeat. */
export class CallEnded extends Error {
  readonly kind: 'deadline' | 'cancelled' | 'stalled';

  constructor(kind: 'deadline' | 'cancelled' | 'stalled') {
    super(kind);
    this.kind = kind;
  }
}

/**
 * Races the handler against its deadline, the caller's cancellation and its heartbeat; a late
 * result is dropped. A class rather than closures: this runs on every call.
 */
class HandlerRace implements CancelListener {
  readonly #context: CallContext;
  readonly #cancellation: Cancellation | null;
  readonly #resolve: (outcome: Settled) => void;
  readonly #heartbeatMs: number | null;
  #timer: NodeJS.Timeout | null = null;
  #heartbeat: NodeJS.Timeout | null = null;
  /** performance.now() when the heartbeat started to be watched: the first beat is due from here. */
  #watchedSince = 0;
  #done = false;

  constructor(context: CallContext, cancellation: Cancellation | null, heartbeatMs: number | null, resolve: (outcome: Settled) => void) {
    this.#context = context;
    this.#cancellation = cancellation;
    this.#heartbeatMs = heartbeatMs;
    this.#resolve = resolve;
    if (cancellation?.reason) this.finish(CANCELLED);
  }

  /**
   * Starts the deadline timer and listens for the caller going away, unless the handler has
   * already answered: most fast calls never make a timer nor a listener.
   */
  arm(): void {
    if (this.#done) return;
    this.#cancellation?.subscribe(this);
    if (this.#done) return;
    this.#timer = setTimeout(onDeadline, Math.max(0, this.#context.deadline - Date.now()), this);
    if (this.#heartbeatMs !== null) {
      this.#watchedSince = performance.now();
      this.#heartbeat = setTimeout(onHeartbeat, this.#heartbeatMs, this);
    }
  }

  /** The heartbeat timer fired: stalled if no beat came within heartbeat_ms, else wait for the next one due. */
  checkHeartbeat(): void {
    const heartbeatMs = this.#heartbeatMs!;
    const due = Math.max(this.#context.lastBeat, this.#watchedSince) + heartbeatMs - performance.now();
    if (due <= 0) this.finish(STALLED);
    else this.#heartbeat = setTimeout(onHeartbeat, due, this);
  }

  get done(): boolean {
    return this.#done;
  }

  onCancelled(): void {
    this.finish(CANCELLED);
  }

  finish(settled: Settled): void {
    if (this.#done) return;
    this.#done = true;
    // A handler that blocked the event loop past its deadline answers late: that answer is dropped.
    const outcome = settled.kind !== 'cancelled' && Date.now() > this.#context.deadline ? DEADLINE : settled;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#heartbeat !== null) clearTimeout(this.#heartbeat);
    this.#cancellation?.unsubscribe(this); // a no-op when arm() never subscribed
    if (outcome.kind === 'deadline' || outcome.kind === 'cancelled' || outcome.kind === 'stalled') this.#context.ended.cancel(new CallEnded(outcome.kind));
    this.#resolve(outcome);
  }
}

const DEADLINE: Settled = { kind: 'deadline' };
const CANCELLED: Settled = { kind: 'cancelled' };
const STALLED: Settled = { kind: 'stalled' };

function onDeadline(race: HandlerRace): void {
  race.finish(DEADLINE);
}

function onHeartbeat(race: HandlerRace): void {
  race.checkHeartbeat();
}

/** `heartbeatMs`: the tool's heartbeat_ms (null: its handler need not beat). */
export function settle(run: () => unknown, context: CallContext, cancellation: Cancellation | null, heartbeatMs: number | null = null): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    const race = new HandlerRace(context, cancellation, heartbeatMs, resolve);
    if (race.done) return;
    try {
      Promise.resolve(run()).then(
        (value) => race.finish({ kind: 'returned', value }),
        (error: unknown) => race.finish({ kind: 'threw', error }),
      );
    } catch (error) {
      race.finish({ kind: 'threw', error });
    }
    // A handler that has already answered settles in the microtask before this one, so most
    // fast calls never create a timer.
    queueMicrotask(() => race.arm());
  });
}
