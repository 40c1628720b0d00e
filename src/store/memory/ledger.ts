/** The in-memory ledger (one process): expiry checked on access, plus prune() for the store's sweeper. */
import {
  resolvedEffect,
  type BeginOutcome,
  type BeginRequest,
  type EffectLedger,
  type EntryLabels,
  type OnLost,
  type Resolution,
  type ToolEffect,
  type UnknownEffect,
} from '../ledger.ts';

interface Entry {
  token: string;
  labels: EntryLabels;
  effect: ToolEffect | null;
  /** Epoch ms: the entry's end — a `rerun` lease's, an `unknown` lease's keep, or the record's (Infinity = never). */
  expiresAt: number;
  /** A lease: when it lapses (epoch ms). */
  until: number;
  onLost: OnLost;
  effectId: string;
  started: number;
  /** A lease of an `unknown` tool that lapsed without a record. */
  unknown: boolean;
}

function unknownOf(key: string, entry: Entry): UnknownEffect {
  const { tool, scope } = entry.labels;
  return { idempotency_key: key, tool_name: tool, scope, effect_id: entry.effectId, lost_at: new Date(entry.started).toISOString() };
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
    let entry = this.#live(request.key, now);
    if (entry !== undefined && request.strictPayload && entry.labels.paramsHash !== request.paramsHash) return { kind: 'mismatch' };
    if (entry?.effect) return { kind: 'replay', effect: entry.effect };
    if (entry?.unknown) return { kind: 'unknown', lost: unknownOf(request.key, entry), fresh: false };
    if (entry !== undefined && entry.token !== request.token) {
      if (entry.until > now) return { kind: 'in_progress', leaseLeftMs: entry.until - now };
      if (entry.onLost === 'unknown') return { kind: 'unknown', lost: this.#lapse(request.key, entry), fresh: true };
      this.#remove(request.key, entry);
      entry = undefined;
    }
    if (entry === undefined) {
      const labels = { tool: request.tool, scope: request.scope, paramsHash: request.paramsHash };
      const fields = { token: request.token, labels, effect: null, onLost: request.onLost ?? 'rerun', effectId: request.effectId ?? '', started: now };
      entry = { ...fields, expiresAt: 0, until: 0, unknown: false };
      this.#entries.set(request.key, entry);
    }
    this.#hold(entry, request.leaseMs, request.keepS, now);
    return { kind: 'run', token: request.token };
  }

  #hold(entry: Entry, leaseMs: number, keepS: number | null | undefined, now = Date.now()): void {
    entry.until = now + leaseMs;
    if (entry.onLost === 'rerun') entry.expiresAt = entry.until;
    else if (keepS !== undefined) entry.expiresAt = keepS === null ? Infinity : now + Math.max(keepS * 1000, leaseMs);
  }

  /** The lapsed lease becomes an unknown outcome (listed by unknown()). */
  #lapse(key: string, entry: Entry): UnknownEffect {
    entry.unknown = true;
    return unknownOf(key, entry);
  }

  async resolve(key: string, resolution: Resolution): Promise<boolean> {
    const now = Date.now();
    const entry = this.#live(key, now);
    if (entry === undefined || entry.effect !== null || !(entry.unknown || (entry.onLost === 'unknown' && entry.until <= now))) return false;
    if (resolution.outcome === 'not_ran') {
      this.#remove(key, entry);
      return true;
    }
    entry.unknown = false;
    entry.token = '';
    const lost = { effectId: entry.effectId, tool: entry.labels.tool, paramsHash: entry.labels.paramsHash };
    const { effect, ttlS } = resolvedEffect(key, lost, resolution.result, resolution.toolInfo);
    return this.complete(entry.labels, '', effect, ttlS);
  }

  async unknown(limit: number): Promise<UnknownEffect[]> {
    const found: UnknownEffect[] = [];
    for (const [key, entry] of this.#entries) if (entry.unknown && this.#live(key) !== undefined) found.push(unknownOf(key, entry));
    return found.sort((a, b) => a.lost_at.localeCompare(b.lost_at)).slice(0, limit);
  }

  async sweep(limit: number): Promise<UnknownEffect[]> {
    const now = Date.now();
    const turned: UnknownEffect[] = [];
    for (const [key, entry] of this.#entries) {
      if (turned.length >= limit) break;
      if (entry.effect === null && !entry.unknown && entry.onLost === 'unknown' && entry.until <= now && entry.expiresAt > now)
        turned.push(this.#lapse(key, entry));
    }
    return turned;
  }

  async complete(labels: EntryLabels, token: string, effect: ToolEffect, ttlS: number | null): Promise<boolean> {
    let entry = this.#live(effect.idempotency_key);
    if (entry !== undefined && entry.token !== token) return false;
    // A lease that lapsed with nobody taking the key over is recorded all the same (as in Redis).
    if (entry === undefined) {
      entry = { token, labels, effect: null, expiresAt: 0, until: 0, onLost: 'rerun', effectId: effect.effect_id, started: 0, unknown: false };
      this.#entries.set(effect.idempotency_key, entry);
    }
    entry.unknown = false;
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
    if (entry !== undefined && entry.effect === null && !entry.unknown && entry.token === token) this.#remove(key, entry);
  }

  async renew(key: string, token: string, leaseMs: number): Promise<boolean> {
    const entry = this.#live(key);
    if (entry === undefined || entry.effect !== null || entry.unknown || entry.token !== token) return false;
    this.#hold(entry, leaseMs, undefined);
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
