/** The in-memory ledger (one process): expiry checked on access, plus prune() for the store's sweeper. */
import type { BeginOutcome, BeginRequest, EffectLedger, EntryLabels, ToolEffect } from '../ledger.ts';

interface Entry {
  token: string;
  labels: EntryLabels;
  effect: ToolEffect | null;
  /** Epoch ms: the lease's end, or the record's (Infinity = never). */
  expiresAt: number;
}

export class MemoryLedger implements EffectLedger {
  readonly #entries = new Map<string, Entry>();
  /** tool → keys and scope → keys, so invalidating one costs in proportion to its own entries. */
  readonly #byTool = new Map<string, Set<string>>();
  readonly #byScope = new Map<string, Set<string>>();

  #live(key: string, now = Date.now()): Entry | undefined {
    const entry = this.#entries.get(key);
    if (entry !== undefined && entry.expiresAt <= now) {
      this.#remove(key, entry);
      return undefined;
    }
    return entry;
  }

  #remove(key: string, entry: Entry): void {
    this.#entries.delete(key);
    unindex(this.#byTool, entry.labels.tool, key);
    unindex(this.#byScope, entry.labels.scope, key);
  }

  async begin(request: BeginRequest): Promise<BeginOutcome> {
    const now = Date.now();
    const entry = this.#live(request.key, now);
    if (entry === undefined) {
      this.#entries.set(request.key, { token: request.token, labels: request, effect: null, expiresAt: now + request.leaseMs });
      return { kind: 'run', token: request.token };
    }
    if (request.strictPayload && entry.labels.paramsHash !== request.paramsHash) return { kind: 'mismatch' };
    if (entry.effect !== null) return { kind: 'replay', effect: entry.effect };
    if (entry.token === request.token) {
      entry.expiresAt = now + request.leaseMs;
      return { kind: 'run', token: request.token };
    }
    return { kind: 'in_progress', leaseLeftMs: entry.expiresAt - now };
  }

  async complete(labels: EntryLabels, token: string, effect: ToolEffect, ttlS: number | null): Promise<boolean> {
    let entry = this.#live(effect.idempotency_key);
    if (entry !== undefined && entry.token !== token) return false;
    // A lease that lapsed with nobody taking the key over is recorded all the same (as in Redis).
    if (entry === undefined) {
      entry = { token, labels, effect: null, expiresAt: 0 };
      this.#entries.set(effect.idempotency_key, entry);
    }
    entry.labels = labels;
    entry.effect = effect;
    entry.expiresAt = ttlS === null ? Infinity : Date.now() + ttlS * 1000;
    // Only records are indexed, as in Redis, where a lease is a key that simply lapses.
    index(this.#byTool, labels.tool, effect.idempotency_key);
    index(this.#byScope, labels.scope, effect.idempotency_key);
    return true;
  }

  async abort(key: string, token: string): Promise<void> {
    const entry = this.#live(key);
    if (entry !== undefined && entry.effect === null && entry.token === token) this.#remove(key, entry);
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const entry = this.#live(key);
    if (entry === undefined || entry.effect !== null || entry.token !== token) return false;
    entry.expiresAt = Date.now() + leaseMs;
    return true;
  }

  async lookup(key: string): Promise<ToolEffect | null> {
    return this.#live(key)?.effect ?? null;
  }

  async invalidate(key: string): Promise<boolean> {
    const entry = this.#live(key);
    if (entry === undefined) return false;
    this.#remove(key, entry);
    return true;
  }

  async invalidateTool(tool: string): Promise<number> {
    return this.#removeAll(this.#byTool.get(tool));
  }

  async clearScope(scope: string): Promise<number> {
    return this.#removeAll(this.#byScope.get(scope));
  }

  #removeAll(keys: Set<string> | undefined): number {
    if (keys === undefined) return 0;
    let removed = 0;
    const now = Date.now();
    for (const key of [...keys]) {
      const entry = this.#entries.get(key);
      if (entry === undefined) continue;
      if (entry.expiresAt > now) removed++;
      this.#remove(key, entry);
    }
    return removed;
  }

  /** Drops expired records and lapsed leases; returns how many. */
  prune(): number {
    const now = Date.now();
    let pruned = 0;
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) {
        this.#remove(key, entry);
        pruned++;
      }
    }
    return pruned;
  }
}

function index(map: Map<string, Set<string>>, name: string, key: string): void {
  let keys = map.get(name);
  if (keys === undefined) map.set(name, (keys = new Set()));
  keys.add(key);
}

function unindex(map: Map<string, Set<string>>, name: string, key: string): void {
  const keys = map.get(name);
  if (keys === undefined) return;
  keys.delete(key);
  if (keys.size === 0) map.delete(name);
}
