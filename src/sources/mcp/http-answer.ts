/**
 * The answer to one POST of the Streamable HTTP transport (http-transport.ts), read as undici hands
 * it over (`dispatch` with this handler: no response stream per call): a JSON answer is read whole,
 * an SSE answer is handed to the transport's stream reader chunk by chunk, an answer that carries
 * nothing for us (202, or only notifications were sent) is let go, and an error status is read for
 * its message. The POST settles once its answer is known (for a stream: once it has begun).
 */
import { StringDecoder } from 'node:string_decoder';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';

/** The most of an error answer's body kept for its message. */
export const MAX_ERROR_TEXT = 2000;

/** How a stream is read: whether it may be reopened with a GET, and the request whose answer it carries. */
export interface StreamOptions {
  reconnectable: boolean;
  /** A resumed POST stream answers the original request under this id. */
  replayId?: string | number;
  /** The call's own headers (call-headers.ts), sent again when the stream is resumed. */
  headers?: Record<string, string>;
  /** The progress token of the tools/call the stream answers: what the server sends on it belongs to that call (relay.ts). */
  call?: string;
}

/** Reads one SSE stream: its chunks as they come, then its end (with the error that broke it). */
export interface SseReader {
  feed(chunk: Buffer): void;
  finish(err?: Error): void;
}

/** What the transport does with an answer. */
export interface AnswerSink {
  /** The server gave (or renewed) the session id. */
  session(id: string): void;
  /** The server accepted `notifications/initialized`: its own stream may be opened now. */
  initialized(): void;
  /** A reader for an SSE stream, ended by `open.destroy()` when the transport closes. */
  stream(open: { destroy(): void }, options: StreamOptions): SseReader;
  message(message: JSONRPCMessage): void;
}

export function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

function isRequest(message: JSONRPCMessage): boolean {
  return 'method' in message && 'id' in message && message.id !== undefined;
}

function hasRequests(message: JSONRPCMessage | JSONRPCMessage[]): boolean {
  return Array.isArray(message) ? message.some(isRequest) : isRequest(message);
}

/** Ends a POST's SSE answer when the transport closes. */
class PostStreamEnd {
  readonly #abort: ((reason?: Error) => void) | null;

  constructor(abort: ((reason?: Error) => void) | null) {
    this.#abort = abort;
  }

  destroy(): void {
    this.#abort?.(new Error('the transport closed'));
  }
}

// Only these answer headers are read; a header of another length is not even decoded.
const SESSION_ID = 'mcp-session-id';
const CONTENT_TYPE = 'content-type';

type Mode = 'skip' | 'json' | 'sse' | 'error';

export class PostAnswer implements Dispatcher.DispatchHandler {
  readonly #sink: AnswerSink;
  readonly #message: JSONRPCMessage | JSONRPCMessage[];
  readonly #headers: Record<string, string> | undefined;
  readonly #resolve: () => void;
  readonly #reject: (err: Error) => void;
  #abort: ((reason?: Error) => void) | null = null;
  #settled = false;
  #mode: Mode = 'skip';
  #status = 0;
  #chunks: Buffer[] = [];
  #text = '';
  #decoder: StringDecoder | null = null;
  #stream: SseReader | null = null;

  /** `headers`: the call's own headers the POST was sent with. */
  constructor(
    sink: AnswerSink,
    message: JSONRPCMessage | JSONRPCMessage[],
    headers: Record<string, string> | undefined,
    resolve: () => void,
    reject: (err: Error) => void,
  ) {
    this.#sink = sink;
    this.#message = message;
    this.#headers = headers;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  onConnect(abort: (reason?: Error) => void): void {
    this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.#status = statusCode;
    let contentType: string | undefined;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const raw = rawHeaders[i]!;
      if (raw.length !== SESSION_ID.length && raw.length !== CONTENT_TYPE.length) continue;
      const name = raw.toString('latin1').toLowerCase();
      if (name === SESSION_ID && rawHeaders[i + 1]!.length > 0) this.#sink.session(rawHeaders[i + 1]!.toString());
      else if (name === CONTENT_TYPE) contentType ??= rawHeaders[i + 1]!.toString();
    }
    const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const message = this.#message;
    if (statusCode > 299) {
      this.#mode = 'error';
      this.#decoder = new StringDecoder('utf8');
    } else if (statusCode === 202) {
      this.#settle();
      if (!Array.isArray(message) && 'method' in message && message.method === 'notifications/initialized') this.#sink.initialized();
    } else if (!hasRequests(message)) this.#settle();
    else if (type === 'text/event-stream') {
      this.#mode = 'sse';
      // Resumed after a drop, the stream's answer is the answer to this request, whatever id the replay carries.
      const replayId = !Array.isArray(message) && 'id' in message && 'method' in message ? message.id : undefined;
      const call = replayId === undefined ? undefined : (message as JSONRPCRequest).params?._meta?.progressToken;
      this.#stream = this.#sink.stream(new PostStreamEnd(this.#abort), {
        reconnectable: false,
        ...(replayId !== undefined && { replayId }),
        ...(this.#headers !== undefined && { headers: this.#headers }),
        ...(typeof call === 'string' && { call }),
      });
      this.#settle();
    } else if (type === 'application/json') this.#mode = 'json';
    else this.#settle(new StreamableHTTPError(-1, `Unexpected content type: ${String(contentType)}`));
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#mode === 'sse') this.#stream!.feed(chunk);
    else if (this.#mode === 'json') this.#chunks.push(chunk);
    else if (this.#mode === 'error') {
      this.#text += this.#decoder!.write(chunk);
      if (this.#text.length >= MAX_ERROR_TEXT) {
        this.#failed();
        this.#abort?.(new Error('enough of the error answer was read'));
        return false;
      }
    }
    return true;
  }

  onComplete(): void {
    if (this.#mode === 'sse') this.#stream!.finish();
    else if (this.#mode === 'error') this.#failed();
    else if (this.#mode === 'json') {
      try {
        const data = JSON.parse(Buffer.concat(this.#chunks).toString('utf8')) as unknown;
        for (const each of Array.isArray(data) ? data : [data]) {
          if (!isMessage(each)) throw new Error(`not a JSON-RPC message: ${JSON.stringify(each).slice(0, 200)}`);
          this.#sink.message(each);
        }
        this.#settle();
      } catch (err) {
        this.#settle(err as Error);
      }
    }
  }

  onError(err: Error): void {
    if (this.#mode === 'sse') this.#stream!.finish(err);
    else if (this.#mode === 'error') this.#failed();
    else this.#settle(err);
  }

  /** An error status: its message names a redirect (never followed) or quotes the answer's beginning. */
  #failed(): void {
    const status = this.#status;
    const said = status >= 300 && status < 400 ? `redirected (HTTP ${status}), not followed` : this.#text.slice(0, MAX_ERROR_TEXT);
    this.#settle(new StreamableHTTPError(status, `Error POSTing to endpoint: ${said}`));
  }

  #settle(err?: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    if (err === undefined) this.#resolve();
    else this.#reject(err);
  }
}
