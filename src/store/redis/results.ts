/**
 * Large results in Redis: one string key per result (`<prefix>{result:<id>}`, JSON), written with
 * its expiry in the same SET, so a result is readable from every replica until Redis drops it.
 */
import type { Cluster, Redis } from 'ioredis';
import type { KeptResult, ResultStore } from '../results.ts';
import type { CommandGuard } from './ledger.ts';

export class RedisResults implements ResultStore {
  readonly #client: Redis | Cluster;
  readonly #prefix: string;
  readonly #guard: CommandGuard;

  constructor(client: Redis | Cluster, keyPrefix: string, guard: CommandGuard) {
    this.#client = client;
    this.#prefix = keyPrefix;
    this.#guard = guard;
  }

  #key(id: string): string {
    return `${this.#prefix}{result:${id}}`;
  }

  async keep(result: KeptResult): Promise<void> {
    const ttlMs = Math.max(1, result.expiresAt - Date.now());
    await this.#guard(() => this.#client.set(this.#key(result.id), JSON.stringify(result), 'PX', ttlMs));
  }

  async read(id: string): Promise<KeptResult | null> {
    const text = await this.#guard(() => this.#client.get(this.#key(id)));
    return text === null ? null : (JSON.parse(text) as KeptResult);
  }
}
