/** Request counts in Redis, one key per caller, so a caller's limit holds across every replica. */
import type { RateCount, RateCounter } from '../types.ts';
import { defineScripts, type RedisClient } from './scripts.ts';

type Client = RedisClient & {
  rateLimit(counter: string, windowMs: number): Promise<[number, number]>;
};

export class RedisRateCounter implements RateCounter {
  readonly #client: Client;
  readonly #prefix: string;

  constructor(client: RedisClient, keyPrefix: string) {
    defineScripts(client, { rateLimit: 1 });
    this.#client = client as Client;
    this.#prefix = `${keyPrefix}ratelimit:`;
  }

  /** Sent as it is: with Redis down it fails at once (no offline queue), and the limiter lets the request through. */
  async incr(key: string, windowMs: number): Promise<RateCount> {
    const [current, ttl] = await this.#client.rateLimit(this.#prefix + key, windowMs);
    return { current, ttl };
  }
}
