/** A forwarded tools/call's end for the SDK Client (upstream.ts). */
import type { Cancellation, CancelListener } from '../../tools/context.ts';

/**
 * A call's end as the SDK Client's request reads its `signal` (aborted, reason, throwIfAborted,
 * addEventListener('abort') — nothing else), without an AbortController and its EventTarget per call.
 */
export class EndSignal implements CancelListener {
  readonly #end: Cancellation;
  #listeners: (() => void)[] | null = null;

  constructor(end: Cancellation) {
    this.#end = end;
  }

  get aborted(): boolean {
    return this.#end.reason !== null;
  }

  get reason(): Error | undefined {
    return this.#end.reason ?? undefined;
  }

  throwIfAborted(): void {
    if (this.#end.reason !== null) throw this.#end.reason;
  }

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.#listeners === null) {
      this.#listeners = [];
      this.#end.subscribe(this);
    }
    this.#listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.#listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.#listeners!.splice(i, 1);
  }

  onCancelled(): void {
    for (const listener of this.#listeners ?? []) listener();
  }
}
