/** MCP clients' declarations in this process: a Map whose entries lapse on access and on the store's sweep. */
import type { McpClientStore } from '../mcp-clients.ts';

export class MemoryMcpClients implements McpClientStore {
  readonly #entries = new Map<string, { json: string; until: number }>();

  async remember(key: string, json: string, ttlMs: number): Promise<void> {
    this.#entries.set(key, { json, until: Date.now() + ttlMs });
  }

  async recall(key: string): Promise<string | null> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    if (entry.until > Date.now()) return entry.json;
    this.#entries.delete(key);
    return null;
  }

  /** Drops what has lapsed (the store's periodic sweep). */
  prune(): void {
    const now = Date.now();
    for (const [key, entry] of this.#entries) if (entry.until <= now) this.#entries.delete(key);
  }
}
