/** The call log of one process: a bounded array, newest last, and in-process listeners. */
import type { CallLog } from '../types.ts';

export class MemoryCallLog implements CallLog {
  readonly #max: number;
  readonly #entries: string[] = [];
  readonly #listeners = new Set<(entry: string) => void>();

  constructor(max: number) {
    this.#max = max;
  }

  async append(entries: readonly string[]): Promise<void> {
    this.#entries.push(...entries);
    // Trimmed in batches: a full log costs O(1) per entry, not a shift of every entry.
    if (this.#entries.length >= 2 * this.#max) this.#entries.splice(0, this.#entries.length - this.#max);
    for (const entry of entries) for (const listener of this.#listeners) listener(entry);
  }

  async recent(limit: number): Promise<string[]> {
    const kept = this.#entries.slice(-Math.min(limit, this.#max));
    return kept.reverse();
  }

  subscribe(listener: (entry: string) => void): () => void {
    const own = (entry: string) => listener(entry); // one Set entry per subscription, even for the same function
    this.#listeners.add(own);
    return () => this.#listeners.delete(own);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
