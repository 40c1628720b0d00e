/**
 * What a handshake-era MCP client declared at `initialize` (its capabilities and the protocol version
 * agreed), remembered per MCP session in the store so that any replica serving a later request of the
 * session can ask the client something mid-call (form elicitation for an approval, URL mode for a
 * connect link). Read only when a call has something to ask: an ordinary call pays nothing.
 */
import { createHash } from 'node:crypto';
import { isObject } from '../json.ts';
import type { McpClientStore } from '../store/mcp-clients.ts';

export interface DeclaredClient {
  /** The protocol version the initialize answer agreed on. */
  protocolVersion: string;
  capabilities: Record<string, unknown>;
}

/** A client that declares more than this is not remembered (it is then asked nothing mid-call). */
const MAX_JSON_CHARS = 16_384;

/** Whether `capabilities` declare elicitation in `mode`; an empty `elicitation` means form only (2025-06-18). */
export function declaresElicitation(capabilities: unknown, mode: 'form' | 'url'): boolean {
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  if (!isObject(elicitation)) return false;
  if (mode === 'form' && Object.keys(elicitation).length === 0) return true;
  return isObject(elicitation[mode]);
}

export class ClientCapabilities {
  readonly #store: McpClientStore;
  readonly #ttlMs: number;

  /** `ttlMs`: how long a session's declaration is kept (the session's own lifetime). */
  constructor(store: McpClientStore, ttlMs: number) {
    this.#store = store;
    this.#ttlMs = ttlMs;
  }

  /** The caller's MCP session: one caller's declaration never answers for another's requests. */
  static #key(caller: string | null, sessionId: string): string {
    return createHash('sha256')
      .update(`${caller ?? ''}\n${sessionId}`)
      .digest('base64url');
  }

  /** Keeps what the client declared at initialize; nothing when it declared no capability. */
  async remember(caller: string | null, sessionId: string, declared: DeclaredClient): Promise<void> {
    if (sessionId === '' || Object.keys(declared.capabilities).length === 0) return;
    const json = JSON.stringify(declared);
    if (json.length > MAX_JSON_CHARS) return;
    await this.#store.remember(ClientCapabilities.#key(caller, sessionId), json, this.#ttlMs);
  }

  /** What the caller's client declared when it opened this MCP session; null when unknown. */
  async recall(caller: string | null, sessionId: string): Promise<DeclaredClient | null> {
    if (sessionId === '') return null;
    const json = await this.#store.recall(ClientCapabilities.#key(caller, sessionId));
    return json === null ? null : (JSON.parse(json) as DeclaredClient);
  }
}
