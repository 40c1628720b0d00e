/** Large results in this process: a Map whose entries expire on access and on the store's sweep. */
import type { KeptResult, ResultStore } from '../results.ts';

export class MemoryResults implements ResultStore {
  readonly #results = new Map<string, KeptResult>();

  async keep(result: KeptResult): Promise<void> {
    this.#results.set(result.id, result);
  }

  async read(id: string): Promise<KeptResult | null> {
    const result = this.#results.get(id);
    if (result === undefined) return null;
    if (result.expiresAt > Date.now()) return result;
    this.#results.delete(id);
    return null;
  }

  /** Drops the expired results (the store's periodic sweep). */
  prune(): void {
    const now = Date.now();
    for (const [id, result] of this.#results) if (result.expiresAt <= now) this.#results.delete(id);
  }
}
