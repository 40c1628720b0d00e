/**
 * One POST to /mcp or /mcp/{toolset}: the body parsed here (bad JSON answers JSON-RPC -32700), the
 * request's session and scope read from its headers, then one message answered (JSON, or an event
 * stream once a call reports progress) or a batch of the 2024-11-05 and 2025-03-26 revisions.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { JsonInputError, StoreUnavailable } from '../errors.ts';
import { scopeOf, SESSION_ID } from '../http/scope.ts';
import { acceptsEventStream, EventStreamReply } from '../http/sse.ts';
import { parseJson } from '../json.ts';
import { CallStream } from '../mcp/call-stream.ts';
import type { McpEndpoint, RequestEnv } from '../mcp/endpoint.ts';
import { eraOf, type McpHeaders } from '../mcp/era.ts';
import {
  BATCH_VERSIONS,
  classify,
  errorResponse,
  ErrorCode,
  idOf,
  META,
  metaOf,
  ProtocolFault,
  type JsonRpcRequest,
  type JsonRpcResponse,
  type RequestId,
} from '../mcp/protocol.ts';
import type { Metrics } from '../metrics.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import type { SessionSource } from '../tools/session-handle.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function mcpHeadersOf(request: FastifyRequest): McpHeaders {
  return { protocolVersion: headerOf(request, 'mcp-protocol-version'), method: headerOf(request, 'mcp-method'), name: headerOf(request, 'mcp-name') };
}

export function send(request: FastifyRequest, reply: FastifyReply, status: number, body: JsonRpcResponse | JsonRpcResponse[]): FastifyReply {
  return reply.code(status).type('application/json').header('x-request-id', request.id).send(JSON.stringify(body));
}

const accepted = (reply: FastifyReply): FastifyReply => reply.code(202).send();

/** The request's session: named by X-Session-Id, or else by the MCP connection's Mcp-Session-Id. */
interface RequestSession {
  id: string | null;
  source: SessionSource;
}

const NO_SESSION: RequestSession = { id: null, source: 'header' };

function sessionOf(request: FastifyRequest): RequestSession {
  const named = headerOf(request, 'x-session-id');
  const connection = headerOf(request, 'mcp-session-id');
  // Both are checked, also the one that does not win: a header the document refuses is refused.
  for (const given of [named, connection]) {
    if (given !== undefined && !SESSION_ID.test(given))
      throw new ProtocolFault(ErrorCode.InvalidRequest, 'X-Session-Id / Mcp-Session-Id must match ^[A-Za-z0-9._:-]{1,128}$');
  }
  const id = named ?? connection;
  if (id === undefined) return NO_SESSION;
  return { id, source: named === undefined ? 'connection' : 'header' };
}

/** The tools the tools/call requests among these messages name (for the scope check, before any runs). */
function calledTools(messages: readonly unknown[]): string[] {
  const names: string[] = [];
  for (const message of messages) {
    const { method, params } = (message ?? {}) as { method?: unknown; params?: { name?: unknown } };
    if (method === 'tools/call' && typeof params?.name === 'string') names.push(params.name);
  }
  return names;
}

/** The call's scope; a bad X-Timeout-Ms is a protocol fault of the whole POST. */
function scopeFor(request: FastifyRequest, reply: FastifyReply, session: RequestSession): InvocationScope {
  try {
    return scopeOf(request, reply, 'mcp', session);
  } catch (err) {
    throw new ProtocolFault(ErrorCode.InvalidRequest, err instanceof Error ? err.message : 'invalid header');
  }
}

/**
 * The handshake era's `initialize` answer names the connection's session (docs/mcp-and-gateways.md): a new one,
 * or the one the client already sends; none when X-Session-Id names the session.
 */
function issueSession(reply: FastifyReply, session: RequestSession): string {
  if (session.source === 'header' && session.id !== null) return session.id;
  const id = session.id ?? randomUUID();
  reply.header('mcp-session-id', id);
  return id;
}

export class McpPost {
  readonly #app: FastifyInstance;
  readonly #endpoint: McpEndpoint;
  readonly #metrics: Metrics | undefined;

  constructor(app: FastifyInstance, endpoint: McpEndpoint, metrics: Metrics | undefined) {
    this.#app = app;
    this.#endpoint = endpoint;
    this.#metrics = metrics;
  }

  /** POST /mcp and /mcp/{toolset}: one JSON-RPC message or a batch. */
  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let body: unknown;
    try {
      body = parseJson(utf8.decode(request.body as Buffer));
    } catch (err) {
      const detail = err instanceof JsonInputError ? err.message : 'the body is not valid UTF-8';
      return send(request, reply, 400, errorResponse(null, { code: ErrorCode.ParseError, message: `parse error: ${detail}` }));
    }
    const headers = mcpHeadersOf(request);
    try {
      const session = sessionOf(request);
      if (Array.isArray(body)) return await this.#batch(request, reply, body, headers, session);
      const classified = classify(body);
      if (classified.kind === 'response') {
        await this.#endpoint.response(classified.message, request.caller);
        return accepted(reply);
      }
      const era = eraOf(classified.message, classified.kind === 'request', headers);
      if (classified.kind === 'notification') {
        this.#endpoint.notification(classified.message, session.id ?? '');
        return accepted(reply);
      }
      const message = classified.message;
      if (message.method === 'tools/call') this.#app.requireScopes(request, reply, calledTools([message]));
      const sessionKey = message.method === 'initialize' && era === 'handshake' ? issueSession(reply, session) : (session.id ?? '');
      const callScope = message.method === 'tools/call' ? scopeFor(request, reply, session) : null;
      // A method, not a property arrow: tsx would wrap the arrow in a defineProperty per request.
      return await this.#answer(request, reply, message, {
        era,
        sessionKey,
        caller: request.caller,
        toolset: request.toolset,
        requestId: request.id,
        log: request.log as unknown as Logger,
        scope() {
          return callScope!;
        },
      });
    } catch (err) {
      if (!(err instanceof ProtocolFault)) throw err;
      return send(request, reply, err.status, errorResponse(idOf(body), err.toError()));
    }
  }

  /** Answers one request: JSON, or an SSE stream once the call sends something before its result. */
  async #answer(request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest, env: RequestEnv): Promise<FastifyReply> {
    const stream = message.method === 'tools/call' && acceptsEventStream(request) ? new CallStream(new EventStreamReply(request, reply), message, env) : null;
    let response: JsonRpcResponse;
    let status = 200;
    try {
      response = { jsonrpc: '2.0', id: message.id, result: await this.#endpoint.request(message, env) };
    } catch (err) {
      if (err instanceof ProtocolFault) response = errorResponse(message.id, err.toError());
      else if (err instanceof StoreUnavailable) {
        this.#metrics?.storeError(); // answered here, not by the app's error handler that counts the others
        status = 503;
        reply.header('retry-after', '1');
        response = errorResponse(message.id, { code: ErrorCode.InternalError, message: 'the state store is unreachable; retry shortly' });
      } else if (stream?.open) {
        request.log.error({ err }, 'MCP request failed inside toolport');
        response = errorResponse(message.id, { code: ErrorCode.InternalError, message: 'internal error; it has been logged' });
      } else throw err;
    } finally {
      stream?.settle();
    }
    if (stream?.open) {
      stream.end(response);
      return reply;
    }
    return send(request, reply, status, response);
  }

  async #batch(request: FastifyRequest, reply: FastifyReply, body: unknown[], headers: McpHeaders, session: RequestSession): Promise<FastifyReply> {
    if (body.length === 0) return send(request, reply, 400, errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'an empty batch' }));
    const version = headers.protocolVersion;
    const stateless = body.some(
      (m) => typeof m === 'object' && m !== null && metaOf((m as { params?: Record<string, unknown> }).params)?.[META.protocolVersion] !== undefined,
    );
    if (stateless || (version !== undefined && !BATCH_VERSIONS.includes(version))) {
      const message = `JSON-RPC batches exist only in protocol versions ${BATCH_VERSIONS.join(' and ')}`;
      return send(request, reply, 400, errorResponse(null, { code: ErrorCode.InvalidRequest, message }));
    }
    this.#app.requireScopes(request, reply, calledTools(body));
    let shared: InvocationScope | null = null;
    const answers: Promise<JsonRpcResponse>[] = [];
    for (const item of body) {
      const id: RequestId | null = idOf(item);
      try {
        const classified = classify(item);
        if (classified.kind === 'response') continue;
        eraOf(classified.message, classified.kind === 'request', headers);
        if (classified.kind === 'notification') {
          this.#endpoint.notification(classified.message, session.id ?? '');
          continue;
        }
        if (classified.message.method === 'initialize') throw new ProtocolFault(ErrorCode.InvalidRequest, 'initialize must not be part of a batch');
        const message = classified.message;
        const env: RequestEnv = {
          era: 'handshake',
          sessionKey: session.id ?? '',
          caller: request.caller,
          toolset: request.toolset,
          requestId: request.id,
          log: request.log as unknown as Logger,
          scope() {
            return (shared ??= scopeFor(request, reply, session));
          },
        };
        answers.push(
          this.#endpoint.request(message, env).then(
            (result): JsonRpcResponse => ({ jsonrpc: '2.0', id: message.id, result }),
            (err: unknown) => {
              if (err instanceof ProtocolFault) return errorResponse(message.id, err.toError());
              throw err;
            },
          ),
        );
      } catch (err) {
        if (!(err instanceof ProtocolFault)) throw err;
        answers.push(Promise.resolve(errorResponse(id, err.toError())));
      }
    }
    if (answers.length === 0) return accepted(reply);
    return send(request, reply, 200, await Promise.all(answers));
  }
}
