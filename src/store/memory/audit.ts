/**
 * The audit log of one process: the chain in an array, oldest first, trimmed to the retention, to
 * MAX_ENTRIES and to MAX_TEXT characters of JSON. An entry is kept as its JSON text, made when its
 * batch is appended (so the log holds no call's arguments or objects, whatever their size), and
 * linked (its hash computed, in order) only when something reads it or it is dropped.
 */
import { flatText } from '../../json.ts';
import { auditHash, type AuditBody, type AuditLog, type StoredAuditEntry } from '../audit.ts';

/** The newest entries one process keeps, whatever the retention: a process's memory is not an archive. */
export const MAX_ENTRIES = 100_000;
/** And at most this many characters of their JSON (entries with AUDIT_ARGUMENTS can be large). */
export const MAX_TEXT = 50_000_000;

class Kept implements StoredAuditEntry {
  readonly seq: number;
  readonly at: number;
  readonly body: string;
  prev = '';
  hash = '';

  constructor(seq: number, at: number, body: string) {
    this.seq = seq;
    this.at = at;
    this.body = flatText(body);
  }

  link(prev: string): string {
    this.prev = prev;
    this.hash = auditHash(prev, this.body);
    return this.hash;
  }
}

export class MemoryAuditLog implements AuditLog {
  /** The entries from index #from on; those before it are dropped, and spliced away in bulk (not on every append). */
  readonly #entries: Kept[] = [];
  #from = 0;
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #maxText: number;
  /** Characters of JSON in the entries kept (from #from on). */
  #text = 0;
  #seq = 0;
  /** The index up to which entries are linked, and the hash of the last of them. */
  #linked = 0;
  #head = '';

  constructor(ttlMs: number, max = MAX_ENTRIES, maxText = MAX_TEXT) {
    this.#ttlMs = ttlMs;
    this.#max = max;
    this.#maxText = maxText;
  }

  async append(bodies: readonly AuditBody[], linked = false): Promise<StoredAuditEntry[]> {
    const at = Date.now();
    const added = bodies.map((body) => new Kept(++this.#seq, at, body.text()));
    for (const entry of added) {
      this.#entries.push(entry);
      this.#text += entry.body.length;
    }
    let expired = Math.max(this.#from, this.#entries.length - this.#max);
    for (let i = this.#from; i < expired; i++) this.#text -= this.#entries[i]!.body.length;
    // The oldest go first while past the retention, or while over the size (the newest one stays).
    const last = this.#entries.length - 1;
    while (expired <= last && (this.#entries[expired]!.at <= at - this.#ttlMs || (this.#text > this.#maxText && expired < last)))
      this.#text -= this.#entries[expired++]!.body.length;
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
