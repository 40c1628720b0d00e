/**
 * The Redis store. Fails fast instead of hanging (TRAPS.md): no offline queue, a 1 s command
 * timeout, no blind re-send after a reconnect, and reconnection in the background forever.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import type { Logger } from 'pino';
import { RedisCallLog } from './calls.ts';
import { connectionReady } from './ready.ts';
import { RedisLedger } from './ledger.ts';
import { RedisTaskStore } from './tasks.ts';
import { RedisResults } from './results.ts';
import { RedisCredentials } from './credentials.ts';
import { RedisApprovals } from './approvals.ts';
import { RedisRateCounter } from './rate-limit.ts';
import { defineScripts } from './scripts.ts';
import { RedisMcpClients } from './mcp-clients.ts';
import { RedisAuditLog } from './audit.ts';
import {
  AUDIT_TTL_MS,
  RECENT_CALLS,
  type DefinitionRecord,
  type EventPage,
  type SessionCommit,
  type SessionRead,
  type Store,
  type StoreBackend,
  type StoreOptions,
  type ToolPin,
} from '../types.ts';
import { StoreUnavailable } from '../../errors.ts';

export const COMMAND_TIMEOUT_MS = 1000;
const READY_WAIT_MS = 2000;

type Client = (Redis | Cluster) & {
  commitSession(state: string, versions: string, events: string, seq: string, ...args: (string | number)[]): Promise<number>;
  readSession(state: string, versions: string, ...fields: string[]): Promise<[(string | null)[], (string | null)[]]>;
  sessionEvents(events: string, seq: string, after: number, limit: number, newest: '0' | '1'): Promise<[number, number, string[]]>;
  recordDefinitions(numberOfKeys: number, ...keysAndArgs: (string | number)[]): Promise<number>;
  pinDefinition(current: string, pending: string, mode: 'see' | 'accept', name: string, hash: string): Promise<[string, string | null]>;
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
  /** ioredis enableAutoPipelining: the commands of one event-loop turn go out in one write. */
  autoPipelining?: boolean;
}

/** Chosen when REDIS_URL or REDIS_CLUSTER_NODES is set. */
export const redisBackend: StoreBackend = {
  selected: (config) => config.redisUrl !== null || config.redisClusterNodes !== null,
  async open(config, options, log) {
    const store = new RedisStore({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, autoPipelining: config.redisAutoPipelining }, options, log);
    if (!(await store.waitUntilReady())) log.error('redis is not reachable yet: /readyz answers 503 and store-backed calls 503 until it is');
    return store;
  },
};

export class RedisStore implements Store {
  readonly kind = 'redis';
  readonly #client: Client;
  readonly #options: StoreOptions;
  readonly #log: Logger;
  readonly ledger: RedisLedger;
  readonly tasks: RedisTaskStore;
  readonly calls: RedisCallLog;
  readonly results: RedisResults;
  readonly credentials: RedisCredentials;
  readonly approvals: RedisApprovals;
  readonly rateCounter: RedisRateCounter;
  readonly mcpClients: RedisMcpClients;
  readonly audit: RedisAuditLog;
  /** Whether an outage is under way: it is logged once when it starts and once when it ends. */
  #down = false;

  constructor(target: RedisTarget, options: StoreOptions, log: Logger) {
    this.#options = options;
    this.#log = log;
    const pipelining = { enableAutoPipelining: target.autoPipelining ?? false };
    const client = target.clusterNodes
      ? new Cluster([...target.clusterNodes], { enableOfflineQueue: false, redisOptions: CLIENT_OPTIONS, ...pipelining })
      : new Redis(target.url ?? 'redis://127.0.0.1:6379', { ...CLIENT_OPTIONS, ...pipelining });
    defineScripts(client, { commitSession: 4, readSession: 2, sessionEvents: 2, recordDefinitions: null, pinDefinition: 2 });
    client.on('error', (err: Error) => this.#noteError(err));
    client.on('ready', () => this.#noteRecovery());
    this.#client = client as Client;
    this.ledger = new RedisLedger(client, options.keyPrefix, (command) => this.#run(command));
    this.tasks = new RedisTaskStore(client, options.keyPrefix, (command) => this.#run(command), log);
    this.calls = new RedisCallLog(client, options.keyPrefix, options.recentCalls ?? RECENT_CALLS, log);
    this.results = new RedisResults(client, options.keyPrefix, (command) => this.#run(command));
    this.credentials = new RedisCredentials(client, options.keyPrefix, (command) => this.#run(command));
    this.approvals = new RedisApprovals(client, options.keyPrefix, (command) => this.#run(command));
    this.rateCounter = new RedisRateCounter(client, options.keyPrefix);
    this.mcpClients = new RedisMcpClients(client, options.keyPrefix, (command) => this.#run(command));
    // The audit log writes beside the call feed, on its connection: a stalled batch never holds up a call's commands.
    this.audit = new RedisAuditLog(this.calls.connection, options.keyPrefix, options.auditTtlMs ?? AUDIT_TTL_MS, (command) => this.calls.run(command));
  }

  /** Waits a little for the first connection so the first requests do not see a cold store. */
  async waitUntilReady(timeoutMs = READY_WAIT_MS): Promise<boolean> {
    const [store, calls] = await Promise.all([connectionReady(this.#client, timeoutMs), this.calls.waitUntilReady(timeoutMs)]);
    return store && calls;
  }

  /** One line per outage, without a stack: the requests it fails answer 503 and log nothing more. */
  #noteError(err: Error): void {
    if (this.#down) return;
    this.#down = true;
    this.#log.warn({ reason: err.message }, 'redis is unreachable: store-backed requests answer 503 until it is back');
  }

  #noteRecovery(): void {
    if (!this.#down) return;
    this.#down = false;
    this.#log.info('redis is reachable again');
  }

  #key(sessionId: string, part: string): string {
    return `${this.#options.keyPrefix}{session:${sessionId}}:${part}`;
  }

  async #run<T>(command: () => Promise<T>): Promise<T> {
    this.assertAvailable();
    try {
      const result = await command();
      if (this.#down) this.#noteRecovery(); // a pause (SIGSTOP) ends without a reconnect
      return result;
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.#noteError(err instanceof Error ? err : new Error(message));
      throw new StoreUnavailable(`redis did not answer: ${message}`);
    }
  }

  assertAvailable(): void {
    if (this.#client.status === 'ready') return;
    this.#noteError(new Error(`redis is ${this.#client.status}`));
    throw new StoreUnavailable(`redis is ${this.#client.status}`);
  }

  async ping(): Promise<void> {
    await this.#run(() => this.#client.ping());
  }

  /** The session's four keys, all under one hash tag so its scripts run on Redis Cluster. */
  #sessionKeys(sessionId: string): [state: string, versions: string, events: string, seq: string] {
    return [this.#key(sessionId, 'state'), this.#key(sessionId, 'versions'), this.#key(sessionId, 'events'), this.#key(sessionId, 'seq')];
  }

  async sessionRead(sessionId: string, keys: readonly string[]): Promise<SessionRead> {
    if (keys.length === 0) return { values: [], versions: [] };
    const [state, versions] = this.#sessionKeys(sessionId);
    const [values, seen] = await this.#run(() => this.#client.readSession(state, versions, ...keys));
    return { values: keys.map((_, i) => values[i] ?? null), versions: keys.map((_, i) => Number(seen[i] ?? 0)) };
  }

  async commitSession(sessionId: string, commit: SessionCommit): Promise<boolean> {
    const args: (string | number)[] = [this.#options.sessionTtlS * 1000, this.#options.sessionMaxEvents, commit.event, commit.reads.size];
    for (const [key, version] of commit.reads) args.push(key, String(version));
    for (const [key, value] of commit.writes) args.push(value === null ? 'd' : 's', key, value ?? '');
    return (await this.#run(() => this.#client.commitSession(...this.#sessionKeys(sessionId), ...args))) === 1;
  }

  async sessionEvents(sessionId: string, after: number | 'newest', limit: number): Promise<EventPage> {
    const [, , events, seq] = this.#sessionKeys(sessionId);
    const newest = after === 'newest';
    const [total, firstSeq, page] = await this.#run(() => this.#client.sessionEvents(events, seq, newest ? 0 : after, limit, newest ? '1' : '0'));
    return { events: page, firstSeq: Number(firstSeq), total: Number(total) };
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    return (await this.#run(() => this.#client.del(...this.#sessionKeys(sessionId)))) > 0;
  }

  /** Provenance keys share one hash tag of their own, so one script keeps a whole catalog. */
  #definitionKey(part: string): string {
    return `${this.#options.keyPrefix}{tooldefs}:${part}`;
  }

  async recordDefinitions(records: readonly DefinitionRecord[], at: number): Promise<void> {
    if (records.length === 0) return;
    const keys = [this.#definitionKey('by-hash'), ...records.map((r) => this.#definitionKey(`versions:${r.name}`))];
    const args = records.flatMap((r) => [r.hash, `{"first_served_at":${at},"definition":${r.definition}}`]);
    await this.#run(() => this.#client.recordDefinitions(keys.length, ...keys, at, ...args));
  }

  async definitionByHash(hash: string): Promise<{ definition: string; firstServedAt: number } | null> {
    const record = await this.#run(() => this.#client.hget(this.#definitionKey('by-hash'), hash));
    if (record === null) return null;
    const parsed = JSON.parse(record) as { first_served_at: number; definition: unknown };
    return { definition: JSON.stringify(parsed.definition), firstServedAt: parsed.first_served_at };
  }

  async definitionVersions(name: string): Promise<{ hash: string; firstServedAt: number }[]> {
    const flat = await this.#run(() => this.#client.zrange(this.#definitionKey(`versions:${name}`), '0', '-1', 'WITHSCORES'));
    const versions: { hash: string; firstServedAt: number }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) versions.push({ hash: flat[i]!, firstServedAt: Number(flat[i + 1]) });
    return versions;
  }

  async #pin(mode: 'see' | 'accept', name: string, hash: string): Promise<ToolPin> {
    const [current, pending] = await this.#run(() => this.#client.pinDefinition(this.#definitionKey('pins'), this.#definitionKey('pending'), mode, name, hash));
    return { current, pending: pending || null }; // Lua false arrives as null
  }

  pinSeen(name: string, hash: string): Promise<ToolPin> {
    return this.#pin('see', name, hash);
  }

  pinAccept(name: string, hash: string): Promise<ToolPin> {
    return this.#pin('accept', name, hash);
  }

  async toolPin(name: string): Promise<ToolPin | null> {
    const [current, pending] = await this.#run(() =>
      Promise.all([this.#client.hget(this.#definitionKey('pins'), name), this.#client.hget(this.#definitionKey('pending'), name)]),
    );
    return current === null ? null : { current, pending };
  }

  async close(): Promise<void> {
    await this.tasks.close();
    await this.calls.close();
    this.#client.disconnect();
  }
}
