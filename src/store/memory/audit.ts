/**
 * The audit log of one process: the chain in an array, oldest first, trimmed to the retention and to
 * MAX_ENTRIES. An entry is kept as the body object it was given and linked (its JSON made, its hash
 * computed, in order) only when something reads it, so entries nobody reads cost no hashing.
 */
import { auditHash, type AuditBody, type AuditLog, type StoredAuditEntry } from '../audit.ts';

/** The newest entries one process keeps, whatever the retention: a process's memory is not an archive. */
export const MAX_ENTRIES = 100_000;

class Kept implements StoredAuditEntry {
  readonly seq: number;
  readonly at: number;
  #body: AuditBody | null;
  #text = '';
  prev = '';
  hash = '';

  constructor(seq: number, at: number, body: AuditBody) {
    this.seq = seq;
    this.at = at;
    this.#body = body;
  }

  get body(): string {
    return this.#body === null ? this.#text : this.#body.text();
  }

  link(prev: string): string {
    this.#text = this.#body!.text();
    this.#body = null;
    this.prev = prev;
    this.hash = auditHash(prev, this.#text);
    return this.hash;
  }
}

export class MemoryAuditLog implements AuditLog {
  /** The entries from index #from on; those before it are dropped, and spliced away in bulk (not on every append). */
  readonly #entries: Kept[] = [];
  #from = 0;
  readonly #ttlMs: number;
  readonly #max: number;
  #seq = 0;
  /** The index up to which entries are linked, and the hash of the last of them. */
  #linked = 0;
  #head = '';

  constructor(ttlMs: number, max = MAX_ENTRIES) {
    this.#ttlMs = ttlMs;
    this.#max = max;
  }

  async append(bodies: readonly AuditBody[], linked = false): Promise<StoredAuditEntry[]> {
    const at = Date.now();
    const added = bodies.map((body) => new Kept(++this.#seq, at, body));
    for (const entry of added) this.#entries.push(entry);
    let expired = Math.max(this.#from, this.#entries.length - this.#max);
    while (expired < this.#entries.length && this.#entries[expired]!.at <= at - this.#ttlMs) expired++;
    if (expired > this.#from) {
      this.#linkUpTo(expired); // the chain goes on from the last dropped entry
      this.#from = expired;
      // Once as many are dropped as kept: moving the kept ones costs each append O(1) on average.
      if (this.#from >= this.#entries.length - this.#from) {
        this.#entries.splice(0, this.#from);
        this.#linked -= this.#from;
        this.#from = 0;
      }
    }
    if (linked) this.#linkUpTo(this.#entries.length);
    return added;
  }

  #linkUpTo(count: number): void {
    for (; this.#linked < count; this.#linked++) this.#head = this.#entries[this.#linked]!.link(this.#head);
  }

  async newest(before: number | null, limit: number): Promise<StoredAuditEntry[]> {
    const found: StoredAuditEntry[] = [];
    let i = this.#entries.length - 1;
    while (i >= this.#from && before !== null && this.#entries[i]!.seq >= before) i--;
    this.#linkUpTo(i + 1);
    for (; i >= this.#from && found.length < limit; i--) found.push(this.#entries[i]!);
    return found;
  }

  async oldest(after: number, limit: number): Promise<StoredAuditEntry[]> {
    let start = this.#from;
    while (start < this.#entries.length && this.#entries[start]!.seq <= after) start++;
    if (start === this.#entries.length) return [];
    const end = Math.min(this.#entries.length, start + limit);
    this.#linkUpTo(end);
    return this.#entries.slice(start, end);
  }
}
