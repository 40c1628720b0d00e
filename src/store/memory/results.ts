/**
 * Large results in this process: a Map, oldest first, whose entries expire on access and on the
 * store's sweep, and which holds at most MAX_KEPT_CHARS characters of content: past that, the oldest
 * results go first (a process's memory is bounded; Redis has its own `maxmemory`).
 */
import type { KeptResult, ResultStore } from '../results.ts';

/** The most characters of kept results one process holds (about 100 MB of ASCII text). */
export const MAX_KEPT_CHARS = 100_000_000;

export class MemoryResults implements ResultStore {
  readonly #results = new Map<string, KeptResult>();
  readonly #maxChars: number;
  #chars = 0;

  constructor(maxChars = MAX_KEPT_CHARS) {
    this.#maxChars = maxChars;
  }

  async keep(result: KeptResult): Promise<void> {
    this.#drop(result.id);
    this.#results.set(result.id, result);
    this.#chars += result.content.length;
    // The newest stays even alone over the size: it was just promised to its caller.
    for (const id of this.#results.keys()) {
      if (this.#chars <= this.#maxChars || id === result.id) break;
      this.#drop(id);
    }
  }

  async read(id: string): Promise<KeptResult | null> {
    const result = this.#results.get(id);
    if (result === undefined) return null;
    if (result.expiresAt > Date.now()) return result;
    this.#drop(id);
    return null;
  }

  /** Drops the expired results (the store's periodic sweep). */
  prune(): void {
    const now = Date.now();
    for (const [id, result] of this.#results) if (result.expiresAt <= now) this.#drop(id);
  }

  #drop(id: string): void {
    const result = this.#results.get(id);
    if (result === undefined) return;
    this.#results.delete(id);
    this.#chars -= result.content.length;
  }
}
