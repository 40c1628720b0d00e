/**
 * The audit log in Redis: the chain as one sorted set (score: seq) and its head, both under the
 * `{audit}` hash tag so the appending script runs on Redis Cluster. A batch is one round trip.
 */
import type { Cluster, Redis } from 'ioredis';
import type { AuditBody, AuditLog, StoredAuditEntry } from '../audit.ts';
import { defineScripts } from './scripts.ts';

type Client = (Redis | Cluster) & {
  auditAppend(chain: string, head: string, ttlMs: number, batch: string): Promise<[number, string, string[]]>;
};

/** A member "<seq> <ms> <prev> <hash> <body>" (prev is "" for the first entry: two spaces in a row). */
function parseMember(member: string): StoredAuditEntry | null {
  const match = /^(\d+) \d+ ([0-9a-f]*) ([0-9a-f]+) /.exec(member);
  if (match === null) return null;
  return { seq: Number(match[1]), prev: match[2]!, hash: match[3]!, body: member.slice(match[0].length) };
}

/** A member that does not parse still shows, so that `audit verify` names it. */
function entryOf(member: string, score: string): StoredAuditEntry {
  return parseMember(member) ?? { seq: Number(score), prev: '', hash: '', body: member };
}

export class RedisAuditLog implements AuditLog {
  readonly #client: Client;
  readonly #chain: string;
  readonly #head: string;
  readonly #ttlMs: number;
  readonly #run: <T>(command: () => Promise<T>) => Promise<T>;

  constructor(client: Redis | Cluster, keyPrefix: string, ttlMs: number, run: <T>(command: () => Promise<T>) => Promise<T>) {
    defineScripts(client, { auditAppend: 2 });
    this.#client = client as Client;
    this.#chain = `${keyPrefix}{audit}:chain`;
    this.#head = `${keyPrefix}{audit}:head`;
    this.#ttlMs = ttlMs;
    this.#run = run;
  }

  async append(entries: readonly AuditBody[]): Promise<StoredAuditEntry[]> {
    if (entries.length === 0) return [];
    const bodies = entries.map((entry) => entry.text());
    const [first, firstPrev, hashes] = await this.#run(() => this.#client.auditAppend(this.#chain, this.#head, this.#ttlMs, bodies.join('\n')));
    return bodies.map((body, i) => ({ seq: Number(first) + i, prev: i === 0 ? firstPrev : hashes[i - 1]!, hash: hashes[i]!, body }));
  }

  async newest(before: number | null, limit: number): Promise<StoredAuditEntry[]> {
    const flat = await this.#run(() =>
      this.#client.zrevrangebyscore(this.#chain, before === null ? '+inf' : `(${before}`, '-inf', 'WITHSCORES', 'LIMIT', 0, limit),
    );
    return pairs(flat);
  }

  async oldest(after: number, limit: number): Promise<StoredAuditEntry[]> {
    const flat = await this.#run(() => this.#client.zrangebyscore(this.#chain, `(${after}`, '+inf', 'WITHSCORES', 'LIMIT', 0, limit));
    return pairs(flat);
  }
}

function pairs(flat: string[]): StoredAuditEntry[] {
  const entries: StoredAuditEntry[] = [];
  for (let i = 0; i < flat.length; i += 2) entries.push(entryOf(flat[i]!, flat[i + 1]!));
  return entries;
}
