/**
 * What MCP clients declared when they connected (handshake era), kept per client key for a while so
 * that any replica can read it later in the same MCP session. Opaque JSON to the store.
 */
export interface McpClientStore {
  /** Keeps `json` under `key` for `ttlMs`, replacing what was there. */
  remember(key: string, json: string, ttlMs: number): Promise<void>;
  /** The JSON kept under `key`; null when none is (never kept, or lapsed). */
  recall(key: string): Promise<string | null>;
}
