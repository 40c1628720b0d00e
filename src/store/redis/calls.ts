/**
 * The call log in Redis: one capped list under its own hash tag (every replica appends to it) and
 * a pub/sub channel that carries each batch to every replica's open feeds. It has connections of
 * its own — one for the list, one for the subscription (made when the first feed opens) — so that
 * while Redis stalls, its writes never queue ahead of the calls' own commands.
 */
import { readFileSync } from 'node:fs';
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import { StoreUnavailableError, type CallLog } from '../types.ts';
import { connectionReady } from './ready.ts';

type Client = (Redis | Cluster) & {
  recordCalls(list: string, max: number, channel: string, batch: string, ...entries: string[]): Promise<number>;
};

export class RedisCallLog implements CallLog {
  readonly #client: Client;
  readonly #log: Logger;
  readonly #max: number;
  readonly #list: string;
  readonly #channel: string;
  readonly #listeners = new Set<(entry: string) => void>();
  #subscriber: Redis | Cluster | null = null;

  /** `store`: the store's connection, whose options (fail fast, reconnect forever) this log's copy. */
  constructor(store: Redis | Cluster, keyPrefix: string, max: number, log: Logger) {
    const client = store instanceof Cluster ? store.duplicate() : store.duplicate();
    client.on('error', () => {}); // the store's own connection reports an outage
    client.defineCommand('recordCalls', { numberOfKeys: 1, lua: readFileSync(new URL('./lua/recordCalls.lua', import.meta.url), 'utf8') });
    this.#client = client as Client;
    this.#log = log;
    this.#max = max;
    this.#list = `${keyPrefix}{calls}:recent`;
    this.#channel = `${keyPrefix}calls`;
  }

  async append(entries: readonly string[]): Promise<void> {
    if (entries.length === 0) return;
    const batch = entries.join('\n'); // JSON text holds no raw newline
    await this.#run(() => this.#client.recordCalls(this.#list, this.#max, this.#channel, batch, ...entries));
  }

  waitUntilReady(timeoutMs: number): Promise<boolean> {
    return connectionReady(this.#client, timeoutMs);
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (this.#client.status !== 'ready') throw new StoreUnavailableError(`redis is ${this.#client.status}`);
    try {
      return await command();
    } catch (err) {
      throw new StoreUnavailableError(`redis did not answer: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async recent(limit: number): Promise<string[]> {
    return this.#run(() => this.#client.lrange(this.#list, 0, Math.min(limit, this.#max) - 1));
  }

  subscribe(listener: (entry: string) => void): () => void {
    const own = (entry: string) => listener(entry);
    this.#listeners.add(own);
    if (this.#subscriber === null) this.#subscriber = this.#subscribe();
    return () => this.#listeners.delete(own);
  }

  /**
   * The subscriber connection queues its SUBSCRIBE until it is connected and subscribes again after
   * every reconnection (ioredis autoResubscribe), so a feed opened while Redis is down goes live later.
   */
  #subscribe(): Redis | Cluster {
    const patient = { enableOfflineQueue: true, maxRetriesPerRequest: null };
    const subscriber = this.#client instanceof Cluster
      ? this.#client.duplicate(undefined, { enableOfflineQueue: true, redisOptions: { ...this.#client.options.redisOptions, ...patient } })
      : (this.#client as Redis).duplicate(patient);
    subscriber.on('error', () => {}); // the main connection reports the outage
    subscriber.on('message', (_channel: string, batch: string) => {
      for (const entry of batch.split('\n')) for (const listener of this.#listeners) listener(entry);
    });
    subscriber.subscribe(this.#channel).catch((err: unknown) => this.#log.warn({ err }, 'the call feed could not subscribe to redis'));
    return subscriber;
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#subscriber?.disconnect();
    this.#client.disconnect();
  }
}
