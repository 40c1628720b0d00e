/**
 * The Redis ledger: every state change is one Lua script (lua/*.lua, loaded once with
 * defineCommand) on one key per entry, so it is atomic, works on Redis Cluster, and is safe to
 * repeat. Records carry their TTL; a lease is the same key with a short PEXPIRE, so it lapses by
 * itself when its process dies. Per-tool and per-scope sorted sets index the records.
 */
import { Cluster } from 'ioredis';
import {
  resolvedEffect,
  type BeginOutcome,
  type BeginRequest,
  type EffectLedger,
  type EntryLabels,
  type Resolution,
  type ToolEffect,
  type UnknownEffect,
} from '../ledger.ts';
import { defineScripts, type RedisClient } from './scripts.ts';
import type { DurableGuard } from './durable.ts';

/** Command → number of keys. */
const SCRIPTS = {
  ledgerBegin: 1,
  ledgerBeginIndexed: { keys: 2, file: 'ledgerBegin' },
  ledgerComplete: 1,
  ledgerCompleteIndexed: { keys: 3, file: 'ledgerComplete' },
  ledgerAbort: 1,
  ledgerRenew: 1,
  ledgerIndex: 1,
  ledgerForget: 1,
  ledgerLapse: 1,
  ledgerResolve: 1,
};

type Arg = string | number;
type LedgerClient = RedisClient & {
  ledgerBegin(entry: string, ...args: Arg[]): Promise<[string, ...(string | number)[]]>;
  ledgerBeginIndexed(entry: string, leases: string, ...args: Arg[]): Promise<[string, ...(string | number)[]]>;
  ledgerComplete(entry: string, ...args: Arg[]): Promise<number>;
  ledgerCompleteIndexed(entry: string, toolIndex: string, scopeIndex: string, ...args: Arg[]): Promise<number>;
  ledgerAbort(entry: string, token: string): Promise<number>;
  ledgerRenew(entry: string, token: string, leaseMs: number): Promise<number>;
  ledgerIndex(index: string, member: string, ttlMs: Arg): Promise<number>;
  ledgerForget(entry: string): Promise<(string | null)[]>;
  ledgerLapse(entry: string): Promise<string[]>;
  ledgerResolve(entry: string, outcome: string, json: string, ttlMs: Arg): Promise<string[]>;
};

/** An unknown outcome as the scripts answer it: effect id, start (ms), tool, scope. */
function unknownOf(key: string, [effectId, started, tool, scope]: (string | number | undefined)[]): UnknownEffect {
  return {
    idempotency_key: key,
    tool_name: String(tool ?? ''),
    scope: String(scope ?? ''),
    effect_id: String(effectId ?? ''),
    lost_at: new Date(Number(started ?? 0)).toISOString(),
  };
}

/** Runs a command, turning connection failures into the store's own error (503 at the edge). */
export type CommandGuard = <T>(command: () => Promise<T>) => Promise<T>;

/** Concurrent deletes per batch when invalidating many entries. */
const DELETE_BATCH = 500;

export class RedisLedger implements EffectLedger {
  readonly #client: LedgerClient;
  readonly #prefix: string;
  readonly #guard: CommandGuard;
  /** On Cluster the indexes live in other slots than the entry, so they are written beside it. */
  readonly #cluster: boolean;
  readonly #durable: DurableGuard;

  /** `indexesApart` forces the Cluster way on a single Redis (tests use it to cover that path). */
  constructor(client: RedisClient, keyPrefix: string, guard: CommandGuard, options: { indexesApart?: boolean; durable?: DurableGuard } = {}) {
    defineScripts(client, SCRIPTS);
    this.#client = client as LedgerClient;
    this.#prefix = keyPrefix;
    this.#guard = guard;
    this.#cluster = options.indexesApart ?? client instanceof Cluster;
    this.#durable = options.durable ?? ((command) => guard(() => command(client as never)));
  }

  /** A write: acknowledged by replicas when the caller asks for it. */
  #write<T>(durable: boolean | undefined, command: (client: LedgerClient) => Promise<T>): Promise<T> {
    return durable ? this.#durable(command) : this.#guard(() => command(this.#client));
  }

  /** One key per entry, its own hash tag: `toolport:{effect:session:s1:echo:9f…}`. */
  #entryKey(key: string): string {
    return `${this.#prefix}{effect:${key}}`;
  }

  #toolIndex(tool: string): string {
    return `${this.#prefix}{effects-of-tool:${tool}}`;
  }

  #scopeIndex(scope: string): string {
    return `${this.#prefix}{effects-of-scope:${scope}}`;
  }

  /** Leases of `unknown` tools by end (scores are hints: the sweep reads the entry), for the shared sweep. */
  get #leases(): string {
    return `${this.#prefix}{effect-leases}`;
  }

  /** Unknown outcomes by the start of their lost run. */
  get #unknown(): string {
    return `${this.#prefix}{effects-unknown}`;
  }

  async begin(request: BeginRequest): Promise<BeginOutcome> {
    const onLost = request.onLost ?? 'rerun';
    const keepMs = request.keepS === null ? '' : (request.keepS ?? 0) * 1000;
    const args: Arg[] = [
      request.token,
      request.paramsHash,
      request.leaseMs,
      request.strictPayload ? '1' : '0',
      request.tool,
      request.scope,
      onLost,
      request.effectId ?? '',
      keepMs,
      request.key,
    ];
    const entry = this.#entryKey(request.key);
    const indexApart = onLost === 'unknown' && this.#cluster;
    const begin = this.#write(request.durable, (client) =>
      onLost === 'unknown' && !this.#cluster ? client.ledgerBeginIndexed(entry, this.#leases, ...args) : client.ledgerBegin(entry, ...args),
    );
    // On Cluster the sweep's index is in another slot: written beside the begin, in the same round trip.
    const indexed = indexApart ? this.#guard(() => this.#client.zadd(this.#leases, Date.now() + request.leaseMs, request.key)) : null;
    const [[kind, ...detail]] = await Promise.all([begin, indexed]);
    if (kind === 'run') return { kind: 'run', token: request.token };
    if (kind === 'replay') return { kind: 'replay', effect: JSON.parse(String(detail[0])) as ToolEffect };
    if (kind === 'mismatch') return { kind: 'mismatch' };
    if (kind === 'unknown') {
      const fresh = detail[4] === '1';
      if (fresh) await this.#noteUnknown(request.key, Number(detail[1]));
      return { kind: 'unknown', lost: unknownOf(request.key, detail), fresh };
    }
    return { kind: 'in_progress', leaseLeftMs: Math.max(0, Number(detail[0])) };
  }

  async #noteUnknown(key: string, started: number): Promise<void> {
    await this.#guard(() => Promise.all([this.#client.zadd(this.#unknown, started, key), this.#client.zrem(this.#leases, key)]));
  }

  async resolve(key: string, resolution: Resolution): Promise<boolean> {
    const ran = resolution.outcome === 'ran';
    let [json, ttlMs]: [string, number | ''] = ['', ''];
    if (ran) {
      const [effectId, paramsHash, tool] = await this.#guard(() => this.#client.hmget(this.#entryKey(key), 'effect_id', 'params', 'tool'));
      if (effectId == null) return false;
      const { effect, ttlS } = resolvedEffect(key, { effectId, tool: tool ?? '', paramsHash: paramsHash ?? '' }, resolution.result, resolution.toolInfo);
      [json, ttlMs] = [JSON.stringify(effect), ttlS === null ? '' : ttlS * 1000];
    }
    const labels = await this.#guard(() => this.#client.ledgerResolve(this.#entryKey(key), resolution.outcome, json, ttlMs));
    if (labels.length === 0) return false;
    const [tool, scope] = labels as [string, string];
    await this.#guard(() =>
      Promise.all([
        this.#client.zrem(this.#unknown, key),
        this.#client.zrem(this.#leases, key),
        ...(ran ? [this.#client.ledgerIndex(this.#toolIndex(tool), key, ttlMs), this.#client.ledgerIndex(this.#scopeIndex(scope), key, ttlMs)] : []),
      ]),
    );
    return true;
  }

  async unknown(limit: number): Promise<UnknownEffect[]> {
    const keys = await this.#guard(() => this.#client.zrange(this.#unknown, '0', String(limit - 1)));
    const entries = await this.#guard(() =>
      Promise.all(keys.map((key) => this.#client.hmget(this.#entryKey(key), 'state', 'effect_id', 'started', 'tool', 'scope'))),
    );
    const found: UnknownEffect[] = [];
    const gone: string[] = [];
    entries.forEach(([state, ...rest], i) => (state === 'unknown' ? found.push(unknownOf(keys[i]!, rest as string[])) : gone.push(keys[i]!)));
    if (gone.length > 0) await this.#guard(() => this.#client.zrem(this.#unknown, ...gone));
    return found;
  }

  async sweep(limit: number): Promise<UnknownEffect[]> {
    const keys = await this.#guard(() => this.#client.zrangebyscore(this.#leases, '-inf', Date.now(), 'LIMIT', 0, limit));
    const turned: UnknownEffect[] = [];
    for (const key of keys) {
      const [kind, ...detail] = await this.#guard(() => this.#client.ledgerLapse(this.#entryKey(key)));
      if (kind === 'lease') await this.#guard(() => this.#client.zadd(this.#leases, Number(detail[0]), key));
      else if (kind === 'gone') await this.#guard(() => this.#client.zrem(this.#leases, key));
      else {
        await this.#noteUnknown(key, Number(detail[1]));
        turned.push(unknownOf(key, detail));
      }
    }
    return turned;
  }

  async complete(labels: EntryLabels, token: string, effect: ToolEffect, ttlS: number | null, durable?: boolean): Promise<boolean> {
    const ttlMs = ttlS === null ? '' : ttlS * 1000;
    const key = effect.idempotency_key;
    const [entry, toolIndex, scopeIndex] = [this.#entryKey(key), this.#toolIndex(labels.tool), this.#scopeIndex(labels.scope)];
    const json = JSON.stringify(effect);
    if (!this.#cluster) {
      return (
        (await this.#write(durable, (client) =>
          client.ledgerCompleteIndexed(entry, toolIndex, scopeIndex, token, json, ttlMs, key, labels.paramsHash, labels.tool, labels.scope),
        )) === 1
      );
    }
    // Sent together, answered together: still one round trip. An index may name a record that
    // did not land (harmless: deleting it is a no-op).
    const [, , recorded] = await Promise.all([
      this.#guard(() => this.#client.ledgerIndex(toolIndex, key, ttlMs)),
      this.#guard(() => this.#client.ledgerIndex(scopeIndex, key, ttlMs)),
      this.#write(durable, (client) => client.ledgerComplete(entry, token, json, ttlMs, key, labels.paramsHash, labels.tool, labels.scope)),
    ]);
    return recorded === 1;
  }

  async abort(key: string, token: string): Promise<void> {
    await this.#guard(() => this.#client.ledgerAbort(this.#entryKey(key), token));
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    return (await this.#guard(() => this.#client.ledgerRenew(this.#entryKey(key), token, leaseMs))) === 1;
  }

  async lookup(key: string): Promise<ToolEffect | null> {
    const [state, effect] = await this.#guard(() => this.#client.hmget(this.#entryKey(key), 'state', 'effect'));
    return state === 'done' && effect !== null && effect !== undefined ? (JSON.parse(effect) as ToolEffect) : null;
  }

  async invalidate(key: string): Promise<boolean> {
    const labels = await this.#guard(() => this.#client.ledgerForget(this.#entryKey(key)));
    if (labels.length === 0) return false;
    const [tool, scope] = labels;
    await this.#guard(() =>
      Promise.all([
        typeof tool === 'string' ? this.#client.zrem(this.#toolIndex(tool), key) : null,
        typeof scope === 'string' ? this.#client.zrem(this.#scopeIndex(scope), key) : null,
      ]),
    );
    return true;
  }

  async invalidateTool(tool: string): Promise<number> {
    return this.#removeIndexed(this.#toolIndex(tool));
  }

  async clearScope(scope: string): Promise<number> {
    return this.#removeIndexed(this.#scopeIndex(scope));
  }

  /**
   * Deletes the entries an index names, then those members: one key per command, so it works
   * across Cluster slots. A record indexed meanwhile is newer than the request and survives.
   */
  async #removeIndexed(index: string): Promise<number> {
    const keys = await this.#guard(() => this.#client.zrange(index, '0', '-1'));
    let removed = 0;
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      const deleted = await this.#guard(() => Promise.all(batch.map((key) => this.#client.del(this.#entryKey(key)))));
      removed += deleted.reduce((sum, n) => sum + n, 0);
      await this.#guard(() => this.#client.zrem(index, ...batch));
    }
    return removed;
  }
}
