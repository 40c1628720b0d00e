/**
 * The client side of MCP's Streamable HTTP transport on undici's `request` (the SDK's own client
 * transport goes through WHATWG fetch, web streams and one AbortSignal shared by every request, and
 * costs several times more CPU per call). It implements the SDK's Transport interface, so the SDK
 * Client still drives the protocol: initialization, requests, progress, cancellation, timeouts.
 *
 * What it does, as the SDK's transport does: every message is one POST (JSON answer or an SSE
 * stream of answers, read as it arrives); the session id the server gives is sent back; after
 * `notifications/initialized` a GET stream carries the server's own messages (405: it has none),
 * reopened after a drop; a POST stream that breaks after an event id but before its answer is
 * resumed with a GET and `Last-Event-ID`. Redirects are not followed (a 3xx is an error). No signal
 * is shared across requests: `close()` destroys what is still open.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';
import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The calling user's credential headers (docs/credentials.md) for the requests sent while one
 * call runs: the same server connection carries each user's call with that user's token.
 */
export const callHeaders = new AsyncLocalStorage<Record<string, string>>();

/** The SDK's reconnection defaults for a dropped stream. */
const FIRST_RECONNECT_DELAY_MS = 1000;
const MAX_RECONNECT_DELAY_MS = 30_000;
const RECONNECT_GROWTH = 1.5;
const MAX_RECONNECTS = 2;
/** The most of an error answer's body kept for its message. */
const MAX_ERROR_TEXT = 2000;

type Body = Dispatcher.ResponseData['body'];

/** How a stream is read: whether it may be reopened with a GET, and the request whose answer it carries. */
interface StreamOptions {
  reconnectable: boolean;
  /** A resumed POST stream answers the original request under this id. */
  replayId?: string | number;
}

const mediaType = (header: string | string[] | undefined) =>
  String(header ?? '')
    .split(';')[0]!
    .trim()
    .toLowerCase();
const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

const hasRequests = (message: JSONRPCMessage | JSONRPCMessage[]) =>
  (Array.isArray(message) ? message : [message]).some((m) => 'method' in m && 'id' in m && m.id !== undefined);

export class UndiciStreamableHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  sessionId?: string;

  readonly #agent: Dispatcher;
  readonly #origin: string;
  readonly #path: string;
  readonly #headers: Record<string, string>;
  #protocolVersion: string | undefined;
  #started = false;
  #closed = false;
  /** The server's `retry:`, which replaces the backoff when it sent one. */
  #retryMs: number | undefined;
  /** Bodies being read, destroyed on close. */
  readonly #open = new Set<Body>();
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(url: URL, agent: Dispatcher, headers: Record<string, string> = {}) {
    this.#agent = agent;
    this.#origin = url.origin;
    this.#path = `${url.pathname}${url.search}`;
    this.#headers = headers;
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('the transport is already started');
    this.#started = true;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
  }

  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  #requestHeaders(accept: string, extra?: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...this.#headers, ...callHeaders.getStore(), accept, ...extra };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.#protocolVersion !== undefined) headers['mcp-protocol-version'] = this.#protocolVersion;
    return headers;
  }

  async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    try {
      if (options?.resumptionToken !== undefined) {
        const replayId = !Array.isArray(message) && 'method' in message && 'id' in message ? message.id : undefined;
        this.#openGetStream(options.resumptionToken, { reconnectable: true, ...(replayId !== undefined && { replayId }) }).catch((err: Error) =>
          this.onerror?.(err),
        );
        return;
      }
      const response = await this.#agent.request({
        origin: this.#origin,
        path: this.#path,
        method: 'POST',
        headers: this.#requestHeaders('application/json, text/event-stream', { 'content-type': 'application/json' }),
        body: JSON.stringify(message),
      });
      const session = header(response.headers['mcp-session-id']);
      if (session !== undefined && session !== '') this.sessionId = session;
      const { statusCode, body } = response;
      if (statusCode < 200 || statusCode > 299) {
        const text = await errorText(body);
        throw new StreamableHTTPError(
          statusCode,
          `Error POSTing to endpoint: ${statusCode >= 300 && statusCode < 400 ? `redirected (HTTP ${statusCode}), not followed` : text}`,
        );
      }
      if (statusCode === 202) {
        body.dump().catch(() => {});
        if (!Array.isArray(message) && 'method' in message && message.method === 'notifications/initialized') {
          this.#openGetStream(undefined, { reconnectable: true }).catch((err: Error) => this.onerror?.(err));
        }
        return;
      }
      if (!hasRequests(message)) {
        body.dump().catch(() => {});
        return;
      }
      const type = mediaType(response.headers['content-type']);
      if (type === 'text/event-stream') {
        // Resumed after a drop, the stream's answer is the answer to this request, whatever id the replay carries.
        const replayId = !Array.isArray(message) && 'id' in message && 'method' in message ? message.id : undefined;
        this.#readStream(body, { reconnectable: false, ...(replayId !== undefined && { replayId }) });
      } else if (type === 'application/json') {
        const data = (await body.json()) as unknown;
        for (const each of Array.isArray(data) ? data : [data]) {
          if (!isMessage(each)) throw new Error(`not a JSON-RPC message: ${JSON.stringify(each).slice(0, 200)}`);
          this.onmessage?.(each);
        }
      } else {
        body.dump().catch(() => {});
        throw new StreamableHTTPError(-1, `Unexpected content type: ${String(response.headers['content-type'])}`);
      }
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.onerror?.(error);
      throw error;
    }
  }

  /** The GET stream of the server's own messages, or a POST stream resumed from `lastEventId`. */
  async #openGetStream(lastEventId: string | undefined, options: StreamOptions): Promise<void> {
    if (this.#closed) return;
    const headers = this.#requestHeaders('text/event-stream', lastEventId === undefined ? undefined : { 'last-event-id': lastEventId });
    const response = await this.#agent.request({ origin: this.#origin, path: this.#path, method: 'GET', headers });
    if (response.statusCode !== 200) {
      response.body.dump().catch(() => {});
      if (response.statusCode === 405) return; // the server offers no stream of its own
      throw new StreamableHTTPError(response.statusCode, `Failed to open SSE stream: HTTP ${response.statusCode}`);
    }
    if (this.#closed) {
      response.body.destroy();
      return;
    }
    this.#readStream(response.body, options);
  }

  /**
   * Reads an SSE stream as it arrives, handing each message on. When it ends or breaks before its
   * answer and can be resumed (a GET stream, or a POST stream that gave an event id), it is reopened
   * after the backoff.
   */
  #readStream(body: Body, options: StreamOptions): void {
    this.#open.add(body);
    let lastEventId: string | undefined;
    let answered = false;
    const parser = createParser({
      onEvent: (event: EventSourceMessage) => {
        if (event.id !== undefined && event.id !== '') lastEventId = event.id;
        if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return;
        let message: unknown;
        try {
          message = JSON.parse(event.data);
        } catch (err) {
          this.onerror?.(new Error(`the server sent an event that is not JSON: ${(err as Error).message}`));
          return;
        }
        if (!isMessage(message)) {
          this.onerror?.(new Error('the server sent an event that is not a JSON-RPC message'));
          return;
        }
        if ('id' in message && ('result' in message || 'error' in message)) {
          answered = true;
          if (options.replayId !== undefined) message.id = options.replayId;
        }
        this.onmessage?.(message);
      },
      onRetry: (ms: number) => {
        this.#retryMs = ms;
      },
    });
    // undici's bodies give Buffers; a character cut between two of them is joined here.
    const decoder = new StringDecoder('utf8');
    body.on('data', (chunk: Buffer) => parser.feed(decoder.write(chunk)));
    let done = false;
    const finish = (err?: Error) => {
      if (done) return;
      done = true;
      this.#open.delete(body);
      if (this.#closed) return;
      if (err !== undefined) this.onerror?.(new Error(`SSE stream disconnected: ${err.message}`));
      const resumable = options.reconnectable || lastEventId !== undefined;
      if (resumable && !answered) this.#reconnect(lastEventId, options, 0);
    };
    body.on('end', () => finish());
    body.on('error', (err: Error) => finish(err));
    body.on('close', () => finish());
  }

  #reconnect(lastEventId: string | undefined, options: StreamOptions, attempt: number): void {
    if (this.#closed) return;
    if (attempt >= MAX_RECONNECTS) {
      this.onerror?.(new Error(`Maximum reconnection attempts (${MAX_RECONNECTS}) exceeded.`));
      return;
    }
    const delay = this.#retryMs ?? Math.min(FIRST_RECONNECT_DELAY_MS * RECONNECT_GROWTH ** attempt, MAX_RECONNECT_DELAY_MS);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      this.#openGetStream(lastEventId, { ...options, reconnectable: true }).catch((err: unknown) => {
        this.onerror?.(new Error(`Failed to reconnect SSE stream: ${err instanceof Error ? err.message : String(err)}`));
        this.#reconnect(lastEventId, options, attempt + 1);
      });
    }, delay);
    this.#timers.add(timer);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    for (const body of this.#open) body.destroy();
    this.#open.clear();
    this.onclose?.();
  }
}

/** The beginning of an error answer's body, for its message. */
async function errorText(body: Body): Promise<string> {
  let text = '';
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of body) {
      text += decoder.write(chunk as Buffer);
      if (text.length >= MAX_ERROR_TEXT) {
        body.destroy();
        break;
      }
    }
  } catch {
    // what came is enough
  }
  return text.slice(0, MAX_ERROR_TEXT);
}
