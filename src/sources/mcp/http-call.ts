/**
 * A `tools/call` to an MCP server over Streamable HTTP without the SDK Client's Protocol: the
 * JSON-RPC request is written and posted by the transport (http-transport.ts, on the upstream's
 * undici pool), and its answer, JSON or SSE, is taken as it comes, without zod for the common
 * result (call-result.ts) and without a timer per call: the call's own end (its deadline or
 * cancellation) stops the wait and sends `notifications/cancelled`, as the Protocol does.
 *
 * The SDK Client keeps everything else: the handshake, the listings, and the messages that come
 * on the call's stream besides its answer (progress, the server's own requests), which the
 * transport hands to it. A tool the Client must check itself (an output schema, required tasks)
 * is called through the Client (upstream.ts decides).
 */
import { ErrorCode, McpError, type JSONRPCMessage, type JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Cancellation, type CancelListener } from '../../tools/context.ts';
import { isObject } from '../../json.ts';
import type { PendingRequest, UndiciStreamableHttpTransport } from './http-transport.ts';

class LeanCall implements PendingRequest, CancelListener {
  readonly #transport: UndiciStreamableHttpTransport;
  readonly #id: string;
  readonly #end: Cancellation | AbortSignal;
  readonly #resolve: (result: Record<string, unknown>) => void;
  readonly #reject: (err: unknown) => void;
  #done = false;

  constructor(
    transport: UndiciStreamableHttpTransport,
    id: string,
    end: Cancellation | AbortSignal,
    resolve: (result: Record<string, unknown>) => void,
    reject: (err: unknown) => void,
  ) {
    this.#transport = transport;
    this.#id = id;
    this.#end = end;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** Waits for the call's end (subscribed once the request is out). */
  watch(): void {
    if (this.#done) return;
    if (this.#end instanceof Cancellation) this.#end.subscribe(this);
    else this.#end.addEventListener('abort', this, { once: true });
  }

  /** The AbortSignal's listener. */
  handleEvent(): void {
    this.onCancelled();
  }

  answer(message: JSONRPCMessage): void {
    if (!this.#finish()) return;
    if ('error' in message) {
      const { code, message: said, data } = message.error;
      this.#reject(new McpError(code, said, data));
    } else if ('result' in message && isObject(message.result)) this.#resolve(message.result);
    else this.#reject(new McpError(ErrorCode.InternalError, 'the server answered tools/call without a result'));
  }

  failed(error: Error): void {
    if (this.#finish()) this.#reject(error);
  }

  /** The call's deadline or cancellation: the server is told, the caller has its answer already. */
  onCancelled(): void {
    if (!this.#finish()) return;
    this.#transport.forget(this.#id);
    const reason = this.#end instanceof Cancellation ? this.#end.reason : (this.#end.reason as unknown);
    const cancelled: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: this.#id, reason: String(reason) } };
    this.#transport.send(cancelled).catch(() => {}); // the transport's onerror has logged it
    this.#reject(reason);
  }

  /** True the first time: the call is settled now. */
  #finish(): boolean {
    if (this.#done) return false;
    this.#done = true;
    if (this.#end instanceof Cancellation) this.#end.unsubscribe(this);
    else this.#end.removeEventListener('abort', this);
    return true;
  }
}

/**
 * Posts `tools/call` as request `id` (a string: the SDK Client numbers its own requests) and resolves
 * with the server's result object (not yet checked as a CallToolResult), or rejects with its JSON-RPC
 * error as an McpError, the failed POST's error, or the call's end.
 */
export function callToolOverHttp(
  transport: UndiciStreamableHttpTransport,
  id: string,
  params: JSONRPCRequest['params'],
  end: Cancellation | AbortSignal,
): Promise<Record<string, unknown>> {
  const reason = end instanceof Cancellation ? end.reason : end.aborted ? (end.reason as unknown) : null;
  if (reason !== null) return Promise.reject(reason);
  return new Promise((resolve, reject) => {
    const call = new LeanCall(transport, id, end, resolve, reject);
    transport.request({ jsonrpc: '2.0', id, method: 'tools/call', params }, call);
    call.watch();
  });
}
