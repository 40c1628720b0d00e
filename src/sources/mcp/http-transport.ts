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
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { isMessage, PostAnswer, type AnswerSink, type SseReader, type StreamOptions } from './http-answer.ts';
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

type Body = Dispatcher.ResponseData['body'];

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
  /** Streams being read, destroyed on close. */
  readonly #open = new Set<{ destroy(): void }>();
  readonly #timers = new Set<NodeJS.Timeout>();
  /** What each POST's answer (http-answer.ts) does to this transport. */
  readonly #answers: AnswerSink = {
    session: (id) => (this.sessionId = id),
    initialized: () => this.#openGetStream(undefined, { reconnectable: true }).catch((err: Error) => this.onerror?.(err)),
    stream: (open, options) => this.#sseReader(open, options),
    message: (message) => this.onmessage?.(message),
  };

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
      await new Promise<void>((resolve, reject) => {
        const headers = this.#requestHeaders('application/json, text/event-stream', { 'content-type': 'application/json' });
        this.#agent.dispatch(
          { origin: this.#origin, path: this.#path, method: 'POST', headers, body: JSON.stringify(message) },
          new PostAnswer(this.#answers, message, resolve, reject),
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

  /** Reads a GET stream (or a resumed POST stream) as it arrives; see SseReader. */
  #readStream(body: Body, options: StreamOptions): void {
    const reader = this.#sseReader(body, options);
    body.on('data', (chunk: Buffer) => reader.feed(chunk));
    body.on('end', () => reader.finish());
    body.on('error', (err: Error) => reader.finish(err));
    body.on('close', () => reader.finish());
  }

  /**
   * Hands each message of an SSE stream on as it arrives. When the stream ends or breaks before its
   * answer and can be resumed (a GET stream, or a POST stream that gave an event id), it is reopened
   * after the backoff.
   */
  #sseReader(open: { destroy(): void }, options: StreamOptions): SseReader {
    this.#open.add(open);
    let answered = false;
    // undici gives Buffers; a character cut between two of them is joined here.
    const decoder = new StringDecoder('utf8');
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
    let lastEventId: string | undefined;
    let done = false;
    return {
      feed: (chunk) => parser.feed(decoder.write(chunk)),
      finish: (err) => {
        if (done) return;
        done = true;
        this.#open.delete(open);
        if (this.#closed) return;
        if (err !== undefined) this.onerror?.(new Error(`SSE stream disconnected: ${err.message}`));
        const resumable = options.reconnectable || lastEventId !== undefined;
        if (resumable && !answered) this.#reconnect(lastEventId, options, 0);
      },
    };
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
    this.onclose?.();
  }
}
