/**
 * The call log in Redis: one capped list under its own hash tag (every replica appends to it) and
 * a pub/sub channel that carries each batch to every replica's open feeds. It has connections of
 * its own — one for the list, one for the subscription (made when the first feed opens) — so that
 * while Redis stalls, its writes never queue ahead of the calls' own commands.
 */
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import { CallLogText, type CallLog, type CallLogEntry } from '../types.ts';
import { connectionReady } from './ready.ts';
import { defineScripts } from './scripts.ts';
import { StoreUnavailable } from '../../errors.ts';

type Client = (Redis | Cluster) & {
  recordCalls(list: string, max: number, channel: string, batch: string): Promise<number>;
};

export class RedisCallLog implements CallLog {
  readonly #client: Client;
  readonly #log: Logger;
  readonly #max: number;
  readonly #list: string;
  readonly #channel: string;
  readonly #listeners = new Set<(entries: readonly CallLogEntry[]) => void>();
  #subscriber: Redis | Cluster | null = null;

  /** `store`: the store's connection, whose options (fail fast, reconnect forever) this log's copy. */
  constructor(store: Redis | Cluster, keyPrefix: string, max: number, log: Logger) {
    const client = store instanceof Cluster ? store.duplicate() : store.duplicate();
    client.on('error', () => {}); // the store's own connection reports an outage
    defineScripts(client, { recordCalls: 1 });
    this.#client = client as Client;
    this.#log = log;
    this.#max = max;
    this.#list = `${keyPrefix}{calls}:recent`;
    this.#channel = `${keyPrefix}calls`;
  }

  /** One command per batch, which carries each entry's text once (the script splits it). */
  async append(entries: readonly CallLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    let batch = entries[0]!.json();
    for (let i = 1; i < entries.length; i++) batch += `\n${entries[i]!.json()}`; // JSON text holds no raw newline
    await this.#run(() => this.#client.recordCalls(this.#list, this.#max, this.#channel, batch));
  }

  /** This log's own connection: the audit log writes its batches there too, off the calls' connection. */
  get connection(): Redis | Cluster {
    return this.#client;
  }

  /** Runs a command on this log's connection: StoreUnavailable when it is not ready or does not answer. */
  run<T>(command: () => Promise<T>): Promise<T> {
    return this.#run(command);
  }

  waitUntilReady(timeoutMs: number): Promise<boolean> {
    return connectionReady(this.#client, timeoutMs);
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    if (this.#client.status !== 'ready') throw new StoreUnavailable(`redis is ${this.#client.status}`);
    try {
      return await command();
    } catch (err) {
      throw new StoreUnavailable(`redis did not answer: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async recent(limit: number): Promise<CallLogEntry[]> {
    const texts = await this.#run(() => this.#client.lrange(this.#list, 0, Math.min(limit, this.#max) - 1));
    return texts.map((text) => new CallLogText(text));
  }

  subscribe(listener: (entries: readonly CallLogEntry[]) => void): () => void {
    const own = (entries: readonly CallLogEntry[]) => listener(entries);
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
    const subscriber =
      this.#client instanceof Cluster
        ? this.#client.duplicate(undefined, { enableOfflineQueue: true, redisOptions: { ...this.#client.options.redisOptions, ...patient } })
        : (this.#client as Redis).duplicate(patient);
    subscriber.on('error', () => {}); // the main connection reports the outage
    subscriber.on('message', (_channel: string, batch: string) => {
      if (this.#listeners.size === 0) return; // every feed of this process closed since
      const entries = batch.split('\n').map((text) => new CallLogText(text));
      for (const listener of this.#listeners) listener(entries);
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
