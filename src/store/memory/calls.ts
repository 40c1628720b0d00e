/**
 * The call log of one process: a ring of the newest entries, kept as the objects they are (an entry
 * nobody reads is never serialized), and in-process listeners.
 */
import type { CallLog, CallLogEntry } from '../types.ts';

export class MemoryCallLog implements CallLog {
  readonly #ring: (CallLogEntry | undefined)[];
  /** Where the next entry goes; `#size` entries before it are kept. */
  #next = 0;
  #size = 0;
  readonly #listeners = new Set<(entries: readonly CallLogEntry[]) => void>();

  constructor(max: number) {
    this.#ring = new Array<CallLogEntry | undefined>(max);
  }

  async append(entries: readonly CallLogEntry[]): Promise<void> {
    const ring = this.#ring;
    for (const entry of entries) {
      ring[this.#next] = entry;
      this.#next = (this.#next + 1) % ring.length;
    }
    this.#size = Math.min(ring.length, this.#size + entries.length);
    for (const listener of this.#listeners) listener(entries);
  }

  async recent(limit: number): Promise<CallLogEntry[]> {
    const ring = this.#ring;
    const count = Math.min(limit, this.#size);
    const newest: CallLogEntry[] = new Array<CallLogEntry>(count);
    for (let i = 0; i < count; i++) newest[i] = ring[(this.#next - 1 - i + ring.length) % ring.length]!;
    return newest;
  }

  subscribe(listener: (entries: readonly CallLogEntry[]) => void): () => void {
    const own = (entries: readonly CallLogEntry[]) => listener(entries); // one Set entry per subscription, even for the same function
    this.#listeners.add(own);
    return () => this.#listeners.delete(own);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
