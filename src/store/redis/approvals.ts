/**
 * Approvals in Redis: one hash per record (`json`, `status`, `expires`, and a runner's lease), a
 * binding key per identical call, a creation-time index and single-use tokens, all under the one
 * hash tag `{approvals}` (approvals wait for people: few next to calls, one slot holds them). Every
 * change of status is a compare-and-set in Lua (lua/approval*.lua), timed by the store's own clock.
 */
import { randomBytes } from 'node:crypto';
import type { ApprovalStatus, ApprovalStore, ExpiryGuard, MoveOutcome, NewApproval } from '../approvals.ts';
import type { CommandGuard } from './ledger.ts';
import type { DurableGuard } from './durable.ts';
import { defineScripts, type RedisClient } from './scripts.ts';

/** Command → number of keys. */
const SCRIPTS = {
  approvalOpen: 5,
  approvalMove: 1,
  approvalClaim: 1,
  approvalComplete: 1,
  approvalRelease: 1,
};

type Arg = string | number;
type ApprovalClient = RedisClient & {
  approvalOpen(binding: string, index: string, bound: string, fresh: string, deadlines: string, ...args: Arg[]): Promise<[number, string?]>;
  approvalMove(record: string, ...args: Arg[]): Promise<MoveOutcome>;
  approvalClaim(record: string, ...args: Arg[]): Promise<number>;
  approvalComplete(record: string, ...args: Arg[]): Promise<number>;
  approvalRelease(binding: string, id: string): Promise<number>;
};

export class RedisApprovals implements ApprovalStore {
  readonly #client: ApprovalClient;
  readonly #prefix: string;
  readonly #run: CommandGuard;
  readonly #durable: DurableGuard;

  /** `durable` runs the writes a decision rests on, acknowledged by replicas. */
  constructor(client: RedisClient, keyPrefix: string, guard: CommandGuard, durable?: DurableGuard) {
    defineScripts(client, SCRIPTS);
    this.#client = client as ApprovalClient;
    this.#prefix = `${keyPrefix}{approvals}:`;
    this.#run = guard;
    this.#durable = durable ?? ((command) => guard(() => command(client as never)));
  }

  #record(id: string): string {
    return `${this.#prefix}a:${id}`;
  }

  async open(binding: string, fresh: NewApproval): Promise<{ json: string; created: boolean }> {
    const bindingKey = `${this.#prefix}b:${binding}`;
    for (;;) {
      const bound = await this.#run(() => this.#client.get(bindingKey));
      const args = [bound ?? '', fresh.id, fresh.json, fresh.expiresAt, fresh.keepMs];
      const [created, json] = await this.#run(() =>
        this.#client.approvalOpen(bindingKey, `${this.#prefix}index`, this.#record(bound ?? fresh.id), this.#record(fresh.id), this.#deadlines, ...args),
      );
      if (created !== -1) return { json: json!, created: created === 1 };
    }
  }

  async get(id: string): Promise<{ json: string; status: ApprovalStatus } | null> {
    const [json, status] = await this.#run(() => this.#client.hmget(this.#record(id), 'json', 'status'));
    return json == null ? null : { json, status: status as ApprovalStatus };
  }

  move(id: string, from: ApprovalStatus, to: ApprovalStatus, json: string, guard: ExpiryGuard): Promise<MoveOutcome> {
    return this.#durable((client: ApprovalClient) => client.approvalMove(this.#record(id), from, to, json, guard));
  }

  async claim(id: string, runner: string, leaseMs: number): Promise<boolean> {
    return (await this.#run(() => this.#client.approvalClaim(this.#record(id), runner, leaseMs))) === 1;
  }

  async complete(id: string, runner: string, json: string): Promise<boolean> {
    return (await this.#run(() => this.#client.approvalComplete(this.#record(id), runner, json))) === 1;
  }

  async release(binding: string, id: string): Promise<void> {
    await this.#run(() => this.#client.approvalRelease(`${this.#prefix}b:${binding}`, id));
  }

  get #deadlines(): string {
    return `${this.#prefix}deadlines`;
  }

  async due(limit: number): Promise<string[]> {
    const ids = await this.#run(() => this.#client.zrangebyscore(this.#deadlines, '-inf', Date.now(), 'LIMIT', 0, limit));
    if (ids.length === 0) return [];
    // ZREM answers per id whether this replica took it: another sweeping at once gets the others.
    const taken = await this.#run(() => Promise.all(ids.map((id) => this.#client.zrem(this.#deadlines, id))));
    return ids.filter((_, i) => taken[i] === 1);
  }

  async recent(limit: number): Promise<string[]> {
    const index = `${this.#prefix}index`;
    const ids = await this.#run(() => this.#client.zrevrange(index, 0, limit - 1));
    const records = await this.#run(() => Promise.all(ids.map((id) => this.#client.hget(this.#record(id), 'json'))));
    const gone = ids.filter((_, i) => records[i] == null);
    if (gone.length > 0) await this.#run(() => this.#client.zrem(index, ...gone));
    return records.filter((json): json is string => json != null);
  }

  async sharedSecret(): Promise<string> {
    const key = `${this.#prefix}secret`;
    await this.#run(() => this.#client.set(key, randomBytes(32).toString('hex'), 'NX'));
    return (await this.#run(() => this.#client.get(key)))!;
  }

  async useOnce(token: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(() => this.#client.set(`${this.#prefix}used:${token}`, '1', 'PX', ttlMs, 'NX'))) === 'OK';
  }
}
