/**
 * Talking to HTTP upstreams (HTTP and OpenAPI tools): one undici Agent per app — pooled,
 * kept-alive connections per origin — and one request per call, aborted by the call's signal
 * (deadline or cancellation). Redirects are never followed (undici's `request` does not follow
 * them without an interceptor). The path is sent as built, never re-parsed, so an encoded `%2F`
 * or `%2E%2E` in it stays data. The body is read up to a limit: a huge answer costs at most that.
 */
import { Agent, type Dispatcher } from 'undici';
import type { ToolContext } from '../../tools/types.ts';

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

/** The upstream could not be reached or broke off (refused, reset, DNS, TLS…), with undici's reason. */
export class UpstreamConnectionError extends Error {
  override name = 'UpstreamConnectionError';
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

  /** The headers toolport sends with every forwarded call (SPEC §10); traceparent comes from tracing. */
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

  async send(request: UpstreamRequest, signal: AbortSignal): Promise<UpstreamAnswer> {
    let response: Dispatcher.ResponseData;
    try {
      response = await this.#agent.request({
        origin: request.origin,
        path: request.path,
        method: request.method,
        headers: request.headers,
        body: request.body,
        signal,
      });
    } catch (err) {
      throw new UpstreamConnectionError(describe(err));
    }
    const contentType = String(response.headers['content-type'] ?? '').toLowerCase();
    const { body, truncated } = await readCapped(response.body, request.maxResponseBytes, Number(response.headers['content-length'] ?? Number.NaN));
    return { status: response.statusCode, contentType, body, truncated };
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}

/** At most `limit` bytes of the body; the rest is not read (the connection is dropped instead). */
async function readCapped(body: Dispatcher.ResponseData['body'], limit: number, declaredLength: number): Promise<{ body: Buffer; truncated: boolean }> {
  if (declaredLength <= limit) {
    // The usual answer: a declared length within the limit, read in one go.
    try {
      return { body: Buffer.from(await body.arrayBuffer()), truncated: false };
    } catch (err) {
      throw new UpstreamConnectionError(describe(err));
    }
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = chunk as Buffer;
      if (size + bytes.length > limit) {
        chunks.push(bytes.subarray(0, limit - size));
        body.destroy();
        return { body: Buffer.concat(chunks, limit), truncated: true };
      }
      chunks.push(bytes);
      size += bytes.length;
    }
  } catch (err) {
    throw new UpstreamConnectionError(describe(err));
  }
  return { body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), truncated: false };
}

/** undici's errors name their cause in `code` (ECONNREFUSED, UND_ERR_SOCKET…) and sometimes `cause`. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as { cause?: unknown }).cause;
  const code = (err as { code?: string }).code ?? (cause as { code?: string } | undefined)?.code;
  const message = err.message === '' && cause instanceof Error ? cause.message : err.message;
  return code === undefined || message.includes(code) ? message : `${code}: ${message}`;
}
