/** The audit log of one process: the chain in an array, oldest first, trimmed to the retention on append. */
import { auditHash, type AuditLog, type StoredAuditEntry } from '../audit.ts';

interface Kept extends StoredAuditEntry {
  readonly at: number;
}

export class MemoryAuditLog implements AuditLog {
  readonly #entries: Kept[] = [];
  readonly #ttlMs: number;
  #seq = 0;
  #prev = '';

  constructor(ttlMs: number) {
    this.#ttlMs = ttlMs;
  }

  async append(bodies: readonly string[]): Promise<StoredAuditEntry[]> {
    const at = Date.now();
    const added: Kept[] = [];
    for (const body of bodies) {
      const hash = auditHash(this.#prev, body);
      added.push({ seq: ++this.#seq, prev: this.#prev, hash, body, at });
      this.#prev = hash;
    }
    this.#entries.push(...added);
    let expired = 0;
    while (expired < this.#entries.length && this.#entries[expired]!.at <= at - this.#ttlMs) expired++;
    if (expired > 0) this.#entries.splice(0, expired);
    return added;
  }

  async newest(before: number | null, limit: number): Promise<StoredAuditEntry[]> {
    const found: StoredAuditEntry[] = [];
    for (let i = this.#entries.length - 1; i >= 0 && found.length < limit; i--) {
      const entry = this.#entries[i]!;
      if (before === null || entry.seq < before) found.push(entry);
    }
    return found;
  }

  async oldest(after: number, limit: number): Promise<StoredAuditEntry[]> {
    const start = this.#entries.findIndex((entry) => entry.seq > after);
    return start === -1 ? [] : this.#entries.slice(start, start + limit);
  }
}
