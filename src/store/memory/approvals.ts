/** Approvals in this process: Maps whose entries expire on access and on the store's sweep. */
import { randomBytes } from 'node:crypto';
import type { ApprovalStatus, ApprovalStore, ExpiryGuard, MoveOutcome, NewApproval } from '../approvals.ts';
import { liveEntry } from './expiry.ts';

interface Entry {
  id: string;
  json: string;
  status: ApprovalStatus;
  expiresAt: number;
  keepUntil: number;
  createdAt: number;
  runner: string | null;
  leaseUntil: number;
}

export class MemoryApprovals implements ApprovalStore {
  readonly #records = new Map<string, Entry>();
  readonly #bindings = new Map<string, { id: string; keepUntil: number }>();
  readonly #tokens = new Map<string, number>();

  #live(id: string): Entry | undefined {
    return liveEntry(this.#records, id, (entry) => entry.keepUntil);
  }

  /** Pending approvals not yet handed to the sweep: id → expiry. */
  readonly #deadlines = new Map<string, number>();

  async due(limit: number): Promise<string[]> {
    const now = Date.now();
    const ids: string[] = [];
    for (const [id, at] of this.#deadlines) {
      if (ids.length >= limit) break;
      if (at > now) continue;
      this.#deadlines.delete(id);
      ids.push(id);
    }
    return ids;
  }

  async open(binding: string, fresh: NewApproval): Promise<{ json: string; created: boolean }> {
    const bound = this.#bindings.get(binding);
    const existing = bound === undefined ? undefined : this.#live(bound.id);
    if (existing !== undefined) return { json: existing.json, created: false };
    const now = Date.now();
    const keepUntil = now + fresh.keepMs;
    this.#deadlines.set(fresh.id, fresh.expiresAt);
    this.#records.set(fresh.id, {
      id: fresh.id,
      json: fresh.json,
      status: 'pending',
      expiresAt: fresh.expiresAt,
      keepUntil,
      createdAt: now,
      runner: null,
      leaseUntil: 0,
    });
    this.#bindings.set(binding, { id: fresh.id, keepUntil });
    return { json: fresh.json, created: true };
  }

  async get(id: string): Promise<{ json: string; status: ApprovalStatus } | null> {
    const entry = this.#live(id);
    return entry === undefined ? null : { json: entry.json, status: entry.status };
  }

  async move(id: string, from: ApprovalStatus, to: ApprovalStatus, json: string, guard: ExpiryGuard): Promise<MoveOutcome> {
    const entry = this.#live(id);
    if (entry === undefined) return 'missing';
    if (entry.status !== from) return entry.status;
    const lapsed = entry.expiresAt <= Date.now();
    if (guard === 'live' && lapsed) return 'expired';
    if (guard === 'lapsed' && !lapsed) return entry.status;
    entry.status = to;
    entry.json = json;
    return 'ok';
  }

  async claim(id: string, runner: string, leaseMs: number): Promise<boolean> {
    const entry = this.#live(id);
    if (entry?.status !== 'approved') return false;
    const now = Date.now();
    if (entry.runner !== null && entry.runner !== runner && entry.leaseUntil > now) return false;
    entry.runner = runner;
    entry.leaseUntil = now + leaseMs;
    return true;
  }

  async complete(id: string, runner: string, json: string): Promise<boolean> {
    const entry = this.#live(id);
    if (entry?.status !== 'approved' || entry.runner !== runner) return false;
    entry.status = 'executed';
    entry.json = json;
    entry.runner = null;
    return true;
  }

  async release(binding: string, id: string): Promise<void> {
    if (this.#bindings.get(binding)?.id === id) this.#bindings.delete(binding);
  }

  async recent(limit: number): Promise<string[]> {
    const live = [...this.#records.keys()].map((id) => this.#live(id)).filter((e): e is Entry => e !== undefined);
    return live
      .sort((a, b) => b.createdAt - a.createdAt)
      .slice(0, limit)
      .map((e) => e.json);
  }

  async useOnce(token: string, ttlMs: number): Promise<boolean> {
    const now = Date.now();
    const until = this.#tokens.get(token);
    if (until !== undefined && until > now) return false;
    this.#tokens.set(token, now + ttlMs);
    return true;
  }

  readonly #secret = randomBytes(32).toString('hex');

  async sharedSecret(): Promise<string> {
    return this.#secret;
  }

  /** Drops what has lapsed (the store's periodic sweep). */
  prune(): void {
    const now = Date.now();
    for (const [id, entry] of this.#records) if (entry.keepUntil <= now) this.#records.delete(id);
    for (const [binding, bound] of this.#bindings) if (bound.keepUntil <= now) this.#bindings.delete(binding);
    for (const [token, until] of this.#tokens) if (until <= now) this.#tokens.delete(token);
  }
}
