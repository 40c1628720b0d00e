/**
 * The Redis store. Fails fast instead of hanging (TRAPS.md): no offline queue, a 1 s command
 * timeout, no blind re-send after a reconnect, and reconnection in the background forever.
 */
import { readFileSync } from 'node:fs';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { RedisLedger } from '../ledger/redis.ts';
import { StoreUnavailableError, type SessionCommit, type Store, type StoreOptions } from './types.ts';

export const COMMAND_TIMEOUT_MS = 1000;
const READY_WAIT_MS = 2000;

const commitSessionLua = readFileSync(new URL('./lua/commitSession.lua', import.meta.url), 'utf8');

type Client = (Redis | Cluster) & {
  commitSession(stateKey: string, eventsKey: string, ...args: (string | number)[]): Promise<number>;
};

const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  commandTimeout: COMMAND_TIMEOUT_MS,
  connectTimeout: COMMAND_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
};

export interface RedisTarget {
  url?: string | null;
  clusterNodes?: readonly { host: string; port: number }[] | null;
}

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly #client: Client;
  readonly #options: StoreOptions;
  readonly #log: Logger;
  readonly ledger: RedisLedger;
  #lastError: string | null = null;

  constructor(target: RedisTarget, options: StoreOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
    const client = target.clusterNodes
      ? new Cluster([...target.clusterNodes], { enableOfflineQueue: false, redisOptions: CLIENT_OPTIONS })
      : new Redis(target.url ?? 'redis://127.0.0.1:6379', CLIENT_OPTIONS);
    client.defineCommand('commitSession', { numberOfKeys: 2, lua: commitSessionLua });
    client.on('error', (err: Error) => this.#noteError(err));
    client.on('ready', () => {
      if (this.#lastError !== null) this.#log.info('redis is reachable again');
      this.#lastError = null;
    });
    this.#client = client as Client;
    this.ledger = new RedisLedger(client, options.keyPrefix, (command) => this.#run(command));
  }

  /** Waits a little for the first connection so the first requests do not see a cold store. */
  async waitUntilReady(timeoutMs = READY_WAIT_MS): Promise<boolean> {
    if (this.#client.status === 'ready') return true;
    return new Promise((resolve) => {
      const done = (ready: boolean) => {
        clearTimeout(timer);
        this.#client.off('ready', onReady);
        resolve(ready);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#client.once('ready', onReady);
    });
  }

  #noteError(err: Error): void {
    if (this.#lastError !== err.message) this.#log.warn({ err: err.message }, 'redis is unreachable');
    this.#lastError = err.message;
  }

  #key(sessionId: string, part: string): string {
    return `${this.#options.keyPrefix}{session:${sessionId}}:${part}`;
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    this.assertAvailable();
    try {
      return await command();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.#noteError(err instanceof Error ? err : new Error(message));
      throw new StoreUnavailableError(`redis did not answer: ${message}`);
    }
  }

  assertAvailable(): void {
    if (this.#client.status !== 'ready') throw new StoreUnavailableError(`redis is ${this.#client.status}`);
  }

  async ping(): Promise<void> {
    await this.#run(() => this.#client.ping());
  }

  async sessionGet(sessionId: string, key: string): Promise<string | null> {
    return this.#run(() => this.#client.hget(this.#key(sessionId, 'state'), key));
  }

  async commitSession(sessionId: string, commit: SessionCommit): Promise<void> {
    const pairs: string[] = [];
    for (const [key, value] of commit.writes) pairs.push(key, value);
    await this.#run(() =>
      this.#client.commitSession(
        this.#key(sessionId, 'state'),
        this.#key(sessionId, 'events'),
        this.#options.sessionTtlS * 1000,
        this.#options.sessionMaxEvents,
        commit.event,
        ...pairs,
      ),
    );
  }

  async sessionEvents(sessionId: string): Promise<string[]> {
    return this.#run(() => this.#client.lrange(this.#key(sessionId, 'events'), 0, -1));
  }

  async close(): Promise<void> {
    this.#client.disconnect();
  }
}
