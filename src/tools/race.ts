/** The handler raced against its deadline and its caller: whichever ends first decides the call. */
import type { CallContext, CancelListener, Cancellation } from './context.ts';

export type Settled = { kind: 'returned'; value: unknown } | { kind: 'threw'; error: unknown } | { kind: 'deadline' } | { kind: 'cancelled' };

/**
 * Races the handler against its deadline and the caller's cancellation; a late result is dropped.
 * A class rather than closures: this runs on every call.
 */
class HandlerRace implements CancelListener {
  readonly #context: CallContext;
  readonly #cancellation: Cancellation | null;
  readonly #resolve: (outcome: Settled) => void;
  #timer: NodeJS.Timeout | null = null;
  #done = false;

  constructor(context: CallContext, cancellation: Cancellation | null, resolve: (outcome: Settled) => void) {
    this.#context = context;
    this.#cancellation = cancellation;
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
    if (!this.#done) this.#timer = setTimeout(onDeadline, Math.max(0, this.#context.deadline - Date.now()), this);
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
    this.#cancellation?.unsubscribe(this); // a no-op when arm() never subscribed
    if (outcome.kind === 'deadline' || outcome.kind === 'cancelled') this.#context.ended.cancel(new Error(outcome.kind));
    this.#resolve(outcome);
  }
}

const DEADLINE: Settled = { kind: 'deadline' };
const CANCELLED: Settled = { kind: 'cancelled' };

function onDeadline(race: HandlerRace): void {
  race.finish(DEADLINE);
}

export function settle(run: () => unknown, context: CallContext, cancellation: Cancellation | null): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    const race = new HandlerRace(context, cancellation, resolve);
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
