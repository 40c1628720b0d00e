/**
 * Talking to HTTP upstreams (HTTP and OpenAPI tools): one undici Agent per app — pooled,
 * kept-alive connections per origin — and one request per call, aborted by the call's signal
 * (deadline or cancellation). Redirects are never followed (undici's `request` does not follow
 * them without an interceptor). The path is sent as built, never re-parsed, so an encoded `%2F`
 * or `%2E%2E` in it stays data. The body is read up to a limit: a huge answer costs at most that.
 */
import { Agent, type Dispatcher } from 'undici';
import { Cancellation, type CancelListener } from '../../tools/context.ts';
import type { ToolContext } from '../../tools/types.ts';
import { UpstreamConnectionError } from '../../errors.ts';

/** The default cut-off of an upstream answer's body (a tools file may set `max_response_bytes`). */
export const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

export interface UpstreamRequest {
  /** `http(s)://host:port` */
  origin: string;
  /** Path and query, already percent-encoded. */
  path: string;
  method: Dispatcher.HttpMethod;
  /** Configured headers (secrets from `${VAR}`), then the call's own. */
  headers: Record<string, string>;
  /** JSON text, or null for no body. */
  body: string | null;
  maxResponseBytes: number;
}

export interface UpstreamAnswer {
  status: number;
  contentType: string;
  /** The body, whole unless `truncated`. */
  body: Buffer;
  /** The upstream sent more than `maxResponseBytes`: `body` holds the first bytes only. */
  truncated: boolean;
}

export class UpstreamClient {
  readonly #agent = new Agent({
    keepAliveTimeout: 10_000,
    keepAliveMaxTimeout: 60_000,
    // The call's signal ends a request at its deadline; these only bound a connection that idles.
    headersTimeout: 0,
    bodyTimeout: 0,
    connect: { timeout: 10_000 },
  });

  /** The pool itself, for clients that speak their own protocol over it (MCP over HTTP). */
  get dispatcher(): Dispatcher {
    return this.#agent;
  }

  /** The headers toolport sends with every forwarded call (docs/tool-sources.md); traceparent comes from tracing. */
  callHeaders(context: ToolContext, configured: Record<string, string>): Record<string, string> {
    const headers: Record<string, string> = {
      ...configured,
      'x-request-id': context.requestId,
      'x-timeout-ms': String(Math.max(0, context.deadline - Date.now())),
    };
    if (context.session !== null) headers['x-session-id'] = context.session.id;
    if (context.idempotencyKey !== null) headers['idempotency-key'] = context.idempotencyKey;
    return headers;
  }

  /**
   * One request through the pool, ended early when the call ends (`end`: its deadline or
   * cancellation). undici's `dispatch` with a small handler of our own: no response stream, no
   * AbortController, no listener on an EventTarget per call.
   */
  send(request: UpstreamRequest, end: Cancellation | AbortSignal): Promise<UpstreamAnswer> {
    return new Promise((resolve, reject) => {
      const handler = new AnswerReader(request.maxResponseBytes, end, resolve, reject);
      this.#agent.dispatch({ origin: request.origin, path: request.path, method: request.method, headers: request.headers, body: request.body }, handler);
    });
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

/** An AbortSignal listener object (the DOM's EventListenerObject, which Node's types do not declare). */
interface AbortListener {
  handleEvent(): void;
}

/**
 * Reads one answer as undici hands it over: the status, the content type and at most `limit` bytes
 * of the body; past the limit the rest is not read (the connection is dropped instead). Settles
 * once; what undici reports after that (the drop it was asked for) is ignored.
 */
class AnswerReader implements Dispatcher.DispatchHandler, CancelListener, AbortListener {
  readonly #limit: number;
  readonly #end: Cancellation | AbortSignal;
  readonly #resolve: (answer: UpstreamAnswer) => void;
  readonly #reject: (err: Error) => void;
  #abort: ((reason?: Error) => void) | null = null;
  #status = 0;
  #contentType = '';
  #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;

  constructor(limit: number, end: Cancellation | AbortSignal, resolve: (answer: UpstreamAnswer) => void, reject: (err: Error) => void) {
    this.#limit = limit;
    this.#end = end;
    this.#resolve = resolve;
    this.#reject = reject;
    if (end instanceof Cancellation) end.subscribe(this);
    else if (end.aborted) this.onCancelled();
    else end.addEventListener('abort', this);
  }

  /** The signal's 'abort' event (this object is its listener: no closure per call). */
  handleEvent(): void {
    this.onCancelled();
  }

  /** The call ended: the request is dropped (at once, or as soon as undici starts it). */
  onCancelled(): void {
    const reason = (this.#end instanceof Cancellation ? this.#end.reason : (this.#end.reason as Error | undefined)) ?? new Error('the call ended');
    this.#fail(reason);
    this.#abort?.(reason);
  }

  onConnect(abort: (reason?: Error) => void): void {
    if (this.#settled) abort(new Error('the call ended'));
    else this.#abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true; // 1xx: the answer comes after
    this.#status = statusCode;
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!;
      if (name.length === 12 && this.#contentType === '' && name.toString().toLowerCase() === 'content-type')
        this.#contentType = rawHeaders[i + 1]!.toString().toLowerCase();
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.#settled) return false;
    if (this.#size + chunk.length > this.#limit) {
      this.#chunks.push(chunk.subarray(0, this.#limit - this.#size));
      this.#finish(Buffer.concat(this.#chunks, this.#limit), true);
      this.#abort?.(new Error('the answer is larger than the limit'));
      return false;
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    return true;
  }

  onComplete(): void {
    const chunks = this.#chunks;
    this.#finish(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size), false);
  }

  onError(err: Error): void {
    this.#fail(err);
  }

  #finish(body: Buffer, truncated: boolean): void {
    if (this.#settled) return;
    this.#settle();
    this.#resolve({ status: this.#status, contentType: this.#contentType, body, truncated });
  }

  #fail(err: Error): void {
    if (this.#settled) return;
    this.#settle();
    this.#reject(new UpstreamConnectionError(describe(err)));
  }

  #settle(): void {
    this.#settled = true;
    this.#chunks = [];
    if (this.#end instanceof Cancellation) this.#end.unsubscribe(this);
    else this.#end.removeEventListener('abort', this);
  }
}

/** undici's errors name their cause in `code` (ECONNREFUSED, UND_ERR_SOCKET…) and sometimes `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = (err as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  const message = err.message === '' && cause instanceof Error ? cause.message : err.message;
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
}
