/**
 * The client side of MCP's Streamable HTTP transport on undici (the SDK's own client
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
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { PostAnswer, type AnswerSink, type StreamOptions } from './http-answer.ts';
import { SseStream, type StreamSink } from './sse-stream.ts';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage, JSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import type { Dispatcher } from 'undici';
import type { CallHeaders } from './call-headers.ts';

/** A request sent past the SDK's Protocol (http-call.ts): its answer, on whichever stream it comes, goes to `answer`. */
export interface PendingRequest {
  answer(message: JSONRPCMessage): void;
  /** The POST failed (no answer will come on it). */
  failed(error: Error): void;
}

/** The SDK's reconnection defaults for a dropped stream. */
const FIRST_RECONNECT_DELAY_MS = 1000;
const MAX_RECONNECT_DELAY_MS = 30_000;
const RECONNECT_GROWTH = 1.5;
const MAX_RECONNECTS = 2;

type Body = Dispatcher.ResponseData['body'];

const POST_HEADERS = { 'content-type': 'application/json' };
const ACCEPT_BOTH = 'application/json, text/event-stream';
const NOTHING = () => {};

export class UndiciStreamableHttpTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** A message of the server on a tools/call's own stream (`call`: its progress token); true: taken, not given to onmessage. */
  oncallmessage?: (message: JSONRPCMessage, call: string) => boolean;
  sessionId?: string;

  readonly #agent: Dispatcher;
  readonly #origin: string;
  readonly #path: string;
  readonly #headers: Record<string, string>;
  readonly #callHeaders: CallHeaders | null;
  #protocolVersion: string | undefined;
  #started = false;
  #closed = false;
  /** The server's `retry:`, which replaces the backoff when it sent one. */
  #retryMs: number | undefined;
  /** Streams being read, destroyed on close. */
  readonly #open = new Set<{ destroy(): void }>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Requests sent with `request()`, by JSON-RPC id; their answers do not go to the SDK Client. */
  readonly #pending = new Map<string | number, PendingRequest>();
  /** The POST headers while there is no session, no protocol version and no call's own headers. */
  #postHeaders: Record<string, string> | null = null;
  /** What each POST's answer (http-answer.ts) does to this transport. */
  readonly #answers: AnswerSink = {
    session: (id) => {
      this.sessionId = id;
      this.#postHeaders = null;
    },
    initialized: () => {
      this.#openGetStream(undefined, { reconnectable: true }).catch((err: Error) => this.onerror?.(err));
    },
    stream: (open, options) => this.#sseReader(open, options),
    message: (message) => this.#deliver(message),
  };
  /** What each SSE stream (sse-stream.ts) does to this transport. */
  readonly #streams: StreamSink = {
    message: (message, call) => this.#deliver(message, call),
    error: (error) => this.onerror?.(error),
    retry: (ms) => (this.#retryMs = ms),
    ended: (stream, err) => this.#streamEnded(stream, err),
  };

  /** `callHeaders`: each call's own headers (the calling user's credentials), sent with its messages. */
  constructor(url: URL, agent: Dispatcher, headers: Record<string, string> = {}, callHeaders: CallHeaders | null = null) {
    this.#agent = agent;
    this.#origin = url.origin;
    this.#path = `${url.pathname}${url.search}`;
    this.#headers = headers;
    this.#callHeaders = callHeaders;
  }

  /** An answer to a request of `request()` goes to it; a message on a call's stream to oncallmessage; everything else to the SDK Client. */
  #deliver(message: JSONRPCMessage, call?: string): void {
    if (this.#pending.size > 0 && 'id' in message && message.id !== undefined && !('method' in message)) {
      const pending = this.#pending.get(message.id);
      if (pending !== undefined) {
        this.#pending.delete(message.id);
        pending.answer(message);
        return;
      }
    }
    if (call !== undefined && 'method' in message) {
      if (this.oncallmessage?.(message, call) === true) return;
      if ('id' in message) this.#callHeaders?.asked(message.id, call);
    }
    this.onmessage?.(message);
  }

  /**
   * Sends `message` as its own POST, its answer (JSON or SSE, resumed as any POST stream) handed to
   * `pending` instead of the SDK Client; progress, the server's own requests and other messages of
   * the answer still go to the Client. `forget(id)` drops it (cancelled).
   */
  request(message: JSONRPCRequest, pending: PendingRequest): void {
    if (this.#closed) {
      pending.failed(new Error('the transport is closed'));
      return;
    }
    const id = message.id as string | number;
    this.#pending.set(id, pending);
    const call = this.#callHeaders?.of(message);
    const headers =
      call === undefined ? (this.#postHeaders ??= this.#requestHeaders(ACCEPT_BOTH, POST_HEADERS)) : this.#requestHeaders(ACCEPT_BOTH, POST_HEADERS, call);
    const failed = (err: Error) => {
      if (this.#pending.get(id) !== pending) return;
      this.#pending.delete(id);
      this.onerror?.(err);
      pending.failed(err);
    };
    this.#agent.dispatch(
      { origin: this.#origin, path: this.#path, method: 'POST', headers, body: JSON.stringify(message) },
      new PostAnswer(this.#answers, message, call, NOTHING, failed),
    );
  }

  forget(id: string | number): void {
    this.#pending.delete(id);
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('the transport is already started');
    this.#started = true;
  }

  setProtocolVersion(version: string): void {
    this.#protocolVersion = version;
    this.#postHeaders = null;
  }

  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  #requestHeaders(accept: string, extra?: Record<string, string>, call?: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = { ...this.#headers, ...call, accept, ...extra };
    if (this.sessionId !== undefined) headers['mcp-session-id'] = this.sessionId;
    if (this.#protocolVersion !== undefined) headers['mcp-protocol-version'] = this.#protocolVersion;
    return headers;
  }

  async send(message: JSONRPCMessage | JSONRPCMessage[], options?: TransportSendOptions): Promise<void> {
    try {
      const call = this.#callHeaders?.of(message);
      if (options?.resumptionToken !== undefined) {
        const replayId = !Array.isArray(message) && 'method' in message && 'id' in message ? message.id : undefined;
        const stream = { reconnectable: true, ...(replayId !== undefined && { replayId }), ...(call !== undefined && { headers: call }) };
        this.#openGetStream(options.resumptionToken, stream).catch((err: Error) => this.onerror?.(err));
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const headers = this.#requestHeaders(ACCEPT_BOTH, POST_HEADERS, call);
        this.#agent.dispatch(
          { origin: this.#origin, path: this.#path, method: 'POST', headers, body: JSON.stringify(message) },
          new PostAnswer(this.#answers, message, call, resolve, reject),
        );
      });
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.onerror?.(error);
      throw error;
    }
  }

  /** The GET stream of the server's own messages, or a POST stream resumed from `lastEventId`. */
  async #openGetStream(lastEventId: string | undefined, options: StreamOptions): Promise<void> {
    if (this.#closed) return;
    const resumed = lastEventId === undefined ? undefined : { 'last-event-id': lastEventId };
    const headers = this.#requestHeaders('text/event-stream', resumed, options.headers);
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

  /** Reads a GET stream (or a resumed POST stream) as it arrives; see SseStream. */
  #readStream(body: Body, options: StreamOptions): void {
    const reader = this.#sseReader(body, options);
    body.on('data', (chunk: Buffer) => reader.feed(chunk));
    body.on('end', () => reader.finish());
    body.on('error', (err: Error) => reader.finish(err));
    body.on('close', () => reader.finish());
  }

  /** An SSE stream to read (see SseStream), ended by `open.destroy()` if the transport closes first. */
  #sseReader(open: { destroy(): void }, options: StreamOptions): SseStream {
    this.#open.add(open);
    return new SseStream(this.#streams, open, options);
  }

  /**
   * A stream that ends or breaks before its answer and can be resumed (a GET stream, or a POST
   * stream that gave an event id) is reopened after the backoff.
   */
  #streamEnded(stream: SseStream, err: Error | undefined): void {
    this.#open.delete(stream.open);
    if (this.#closed) return;
    if (err !== undefined) this.onerror?.(new Error(`SSE stream disconnected: ${err.message}`));
    const resumable = stream.options.reconnectable || stream.lastEventId !== undefined;
    if (resumable && !stream.answered) this.#reconnect(stream.lastEventId, stream.options, 0);
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
    for (const open of this.#open) open.destroy();
    this.#open.clear();
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const each of pending) each.failed(new Error('the connection closed'));
    this.onclose?.();
  }
}
