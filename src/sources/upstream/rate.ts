/**
 * A rate a minute as a token bucket: up to `perMin` calls at once after a quiet spell, then one
 * every 60/perMin seconds. One bucket per upstream, and one per caller when a per-caller rate is
 * set; a caller's bucket that has filled up again is dropped (it holds nothing to remember).
 */

/** Callers' buckets kept before the full ones are swept out. */
const SWEEP_FROM = 1000;

class Bucket {
  tokens: number;
  at: number;

  constructor(capacity: number, now: number) {
    this.tokens = capacity;
    this.at = now;
  }

  refill(capacity: number, perMs: number, now: number): void {
    this.tokens = Math.min(capacity, this.tokens + (now - this.at) * perMs);
    this.at = now;
  }
}

export class RateLimit {
  readonly perMin: number;
  readonly #perMs: number;
  /** The one bucket when the rate is not per caller, made by the first call with that call's clock. */
  #shared: Bucket | null = null;
  readonly #callers: Map<string, Bucket> | null;

  /** `perMin`: the rate of the bucket; `perCaller`: one bucket per caller instead of one for all. */
  constructor(perMin: number, perCaller: boolean) {
    this.perMin = perMin;
    this.#perMs = perMin / 60_000;
    this.#callers = perCaller ? new Map() : null;
  }

  /** Takes one call's token: 0 when taken, else the seconds until one is there (nothing taken). */
  take(caller: string, now: number): number {
    const bucket = this.#callers === null ? (this.#shared ??= new Bucket(this.perMin, now)) : this.#callerBucket(caller, now);
    bucket.refill(this.perMin, this.#perMs, now);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#perMs / 1000));
  }

  /** Gives back a token taken for a call that was refused by a later guard (it never reached the upstream). */
  giveBack(caller: string): void {
    const bucket = this.#callers === null ? (this.#shared ?? undefined) : this.#callers.get(caller);
    if (bucket !== undefined) bucket.tokens = Math.min(this.perMin, bucket.tokens + 1);
  }

  #callerBucket(caller: string, now: number): Bucket {
    const callers = this.#callers!;
    let bucket = callers.get(caller);
    if (bucket === undefined) {
      if (callers.size >= SWEEP_FROM) this.#sweep(now);
      bucket = new Bucket(this.perMin, now);
      callers.set(caller, bucket);
    }
    return bucket;
  }

  #sweep(now: number): void {
    for (const [caller, bucket] of this.#callers!) {
      if (bucket.tokens + (now - bucket.at) * this.#perMs >= this.perMin) this.#callers!.delete(caller);
    }
  }
}
