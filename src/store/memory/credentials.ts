/** Credentials in this process: Maps whose timed entries (leases, single-use tokens) expire on access and on the sweep. */
import type { CredentialRecord, CredentialStore, CredentialWrite, OnceKind } from '../credentials.ts';

interface Timed {
  value: string;
  expiresAt: number;
}

export class MemoryCredentials implements CredentialStore {
  /** owner → name → record */
  readonly #records = new Map<string, Map<string, CredentialRecord>>();
  readonly #leases = new Map<string, Timed>();
  readonly #once = new Map<string, Timed>();

  async get(owner: string, name: string): Promise<CredentialRecord | null> {
    return this.#records.get(owner)?.get(name) ?? null;
  }

  async list(owner: string): Promise<CredentialRecord[]> {
    return [...(this.#records.get(owner)?.values() ?? [])];
  }

  async put(owner: string, record: CredentialWrite, expectVersion?: number): Promise<CredentialRecord | null> {
    let records = this.#records.get(owner);
    const version = records?.get(record.name)?.version ?? 0;
    if (expectVersion !== undefined && expectVersion !== version) return null;
    if (records === undefined) this.#records.set(owner, (records = new Map()));
    const written = Object.freeze({ ...record, scopes: Object.freeze([...record.scopes]), version: version + 1 });
    records.set(record.name, written);
    return written;
  }

  async delete(owner: string, name: string): Promise<boolean> {
    const records = this.#records.get(owner);
    const had = records?.delete(name) ?? false;
    if (records?.size === 0) this.#records.delete(owner);
    return had;
  }

  async lease(owner: string, name: string, holder: string, ttlMs: number): Promise<boolean> {
    const key = `${owner}\n${name}`;
    const held = live(this.#leases, key);
    if (held !== null && held !== holder) return false;
    this.#leases.set(key, { value: holder, expiresAt: Date.now() + ttlMs });
    return true;
  }

  async release(owner: string, name: string, holder: string): Promise<void> {
    const key = `${owner}\n${name}`;
    if (live(this.#leases, key) === holder) this.#leases.delete(key);
  }

  async putOnce(kind: OnceKind, id: string, value: string, ttlMs: number): Promise<void> {
    this.#once.set(`${kind}:${id}`, { value, expiresAt: Date.now() + ttlMs });
  }

  async takeOnce(kind: OnceKind, id: string): Promise<string | null> {
    const key = `${kind}:${id}`;
    const value = live(this.#once, key);
    this.#once.delete(key);
    return value;
  }

  async peekOnce(kind: OnceKind, id: string): Promise<string | null> {
    return live(this.#once, `${kind}:${id}`);
  }

  /** Drops lapsed leases and tokens (the store's periodic sweep). */
  prune(): void {
    const now = Date.now();
    for (const map of [this.#leases, this.#once]) for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
  }
}

function live(map: Map<string, Timed>, key: string): string | null {
  const entry = map.get(key);
  if (entry === undefined) return null;
  if (entry.expiresAt > Date.now()) return entry.value;
  map.delete(key);
  return null;
}
