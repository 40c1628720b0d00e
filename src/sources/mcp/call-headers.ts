/**
 * The calling user's credential headers (docs/credentials.md) for the messages of one call to an
 * MCP server over HTTP: the same connection carries each user's call with that user's token. A
 * call's headers are found by the progress token toolport gives every tools/call, its
 * notifications/cancelled by the request id the call went out under, and toolport's answer to a
 * question the server asked on the call's stream (relay.ts) by the id of that question.
 *
 * Passed explicitly, not through an AsyncLocalStorage: the headers reach the call's cancellation
 * and a resumed stream whatever async context sends them, and on Node 20 the first `run()` of one
 * turned on promise hooks for the whole process, every later call paying for them (Node 24's
 * AsyncLocalStorage no longer does).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

interface Entry {
  readonly headers: Record<string, string>;
  requestId?: string | number;
  /** Ids of the server's questions on this call's stream, not answered yet. */
  asked?: (string | number)[];
}

export class CallHeaders {
  readonly #byToken = new Map<string, Entry>();
  readonly #byRequest = new Map<string | number, Entry>();
  readonly #byQuestion = new Map<string | number, Entry>();

  /** Until `end(token)`, the messages of the call whose progress token is `token` carry `headers`. */
  begin(token: string, headers: Record<string, string>): void {
    this.#byToken.set(token, { headers });
  }

  end(token: string): void {
    const entry = this.#byToken.get(token);
    if (entry === undefined) return;
    this.#byToken.delete(token);
    if (entry.requestId !== undefined) this.#byRequest.delete(entry.requestId);
    for (const id of entry.asked ?? []) this.#byQuestion.delete(id);
  }

  /** The server asked question `id` on the stream of the call `token`: toolport's answer to it carries that call's headers. */
  asked(id: string | number, token: string): void {
    const entry = this.#byToken.get(token);
    if (entry === undefined) return;
    (entry.asked ??= []).push(id);
    this.#byQuestion.set(id, entry);
  }

  /** The headers of the call `message` belongs to, if it belongs to one that has them. */
  of(message: JSONRPCMessage | JSONRPCMessage[]): Record<string, string> | undefined {
    if (this.#byToken.size === 0 || Array.isArray(message)) return undefined;
    if (!('method' in message)) return this.#answer(message.id);
    if ('id' in message) {
      const token = message.params?._meta?.progressToken;
      const entry = typeof token === 'string' ? this.#byToken.get(token) : undefined;
      if (entry === undefined) return undefined;
      entry.requestId = message.id;
      this.#byRequest.set(message.id, entry);
      return entry.headers;
    }
    if (message.method !== 'notifications/cancelled') return undefined;
    const requestId = message.params?.requestId;
    return typeof requestId === 'string' || typeof requestId === 'number' ? this.#byRequest.get(requestId)?.headers : undefined;
  }

  #answer(id: string | number | undefined): Record<string, string> | undefined {
    const entry = id === undefined ? undefined : this.#byQuestion.get(id);
    if (entry === undefined) return undefined;
    this.#byQuestion.delete(id!);
    entry.asked = entry.asked!.filter((each) => each !== id);
    return entry.headers;
  }
}
