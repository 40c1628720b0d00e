/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless per request (docs/mcp-and-gateways.md).
 * JSON in, JSON out; a tools/call whose client sent a progressToken and accepts SSE switches to an
 * event stream on its first progress report. In the handshake era the answer to `initialize`
 * carries a new Mcp-Session-Id: it names the toolport session of the client's later requests, on
 * any replica, since the session lives in the store. GET answers 405 (no server stream); DELETE
 * answers 405 too, which the transport spec defines as "the server does not let clients end
 * sessions": a session's plan outlives the connection (gateways open one per call) and expires
 * SESSION_TTL_S after its last write.
 */
import type { McpApprovals } from '../mcp/approval.ts';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parseJson } from '../json.ts';
import { McpEndpoint, type RequestEnv } from '../mcp/endpoint.ts';
import type { McpClients } from '../mcp/client-approval.ts';
import { McpTasks } from '../mcp/tasks.ts';
import type { TaskRunner } from '../tasks/runner.ts';
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
import { documentOnly, problemResponse } from '../schemas.ts';
import type { Dispatcher, InvocationScope } from '../tools/invoke.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { SessionSource } from '../tools/session-handle.ts';
import type { ResultResources } from '../store/results.ts';
import { scopeOf, SESSION_ID } from '../http/scope.ts';
import { acceptsEventStream, EventStreamReply } from '../http/sse.ts';
import { CallStream } from '../mcp/call-stream.ts';
import { JsonInputError, StoreUnavailable } from '../errors.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function mcpHeadersOf(request: FastifyRequest): McpHeaders {
  return { protocolVersion: headerOf(request, 'mcp-protocol-version'), method: headerOf(request, 'mcp-method'), name: headerOf(request, 'mcp-name') };
}

function send(request: FastifyRequest, reply: FastifyReply, status: number, body: JsonRpcResponse | JsonRpcResponse[]): FastifyReply {
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
  let scope: InvocationScope;
  try {
    scope = scopeOf(request, reply);
  } catch (err) {
    throw new ProtocolFault(ErrorCode.InvalidRequest, err instanceof Error ? err.message : 'invalid header');
  }
  scope.sessionId = session.id;
  if (session.source === 'connection') scope.sessionSource = 'connection';
  scope.format = 'mcp';
  return scope;
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

const jsonRpcMessageSchema = {
  type: 'object',
  required: ['jsonrpc'],
  properties: {
    jsonrpc: { const: '2.0' },
    id: { type: ['string', 'integer'], description: 'absent in a notification' },
    method: { type: 'string', description: 'initialize, ping, tools/list, tools/call, server/discover, notifications/…' },
    params: { type: 'object' },
  },
};

export async function mcpRoutes(
  app: FastifyInstance,
  options: {
    dispatcher: Dispatcher;
    registry: ToolRegistry;
    version: string;
    metrics?: Metrics;
    tasks?: TaskRunner;
    results?: Pick<ResultResources, 'read'>;
    taskInlineMs?: number;
    approvals?: McpApprovals;
    clients?: McpClients;
  },
): Promise<void> {
  const endpoint = new McpEndpoint(
    options.dispatcher,
    options.registry,
    options.version,
    options.tasks ? new McpTasks(options.tasks, options.taskInlineMs) : null,
    options.results ?? null,
    options.approvals ?? null,
    options.clients ?? null,
  );

  // The body is parsed here, not by the app's parser, so that bad JSON answers JSON-RPC -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  /** Answers one request: JSON, or an SSE stream once the call sends something before its result. */
  async function answer(request: FastifyRequest, reply: FastifyReply, message: JsonRpcRequest, env: RequestEnv): Promise<FastifyReply> {
    const stream = message.method === 'tools/call' && acceptsEventStream(request) ? new CallStream(new EventStreamReply(request, reply), message, env) : null;
    let response: JsonRpcResponse;
    let status = 200;
    try {
      response = { jsonrpc: '2.0', id: message.id, result: await endpoint.request(message, env) };
    } catch (err) {
      if (err instanceof ProtocolFault) response = errorResponse(message.id, err.toError());
      else if (err instanceof StoreUnavailable) {
        options.metrics?.storeError(); // answered here, not by the app's error handler that counts the others
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

  async function batch(request: FastifyRequest, reply: FastifyReply, body: unknown[], headers: McpHeaders, session: RequestSession): Promise<FastifyReply> {
    if (body.length === 0) return send(request, reply, 400, errorResponse(null, { code: ErrorCode.InvalidRequest, message: 'an empty batch' }));
    const version = headers.protocolVersion;
    const stateless = body.some(
      (m) => typeof m === 'object' && m !== null && metaOf((m as { params?: Record<string, unknown> }).params)?.[META.protocolVersion] !== undefined,
    );
    if (stateless || (version !== undefined && !BATCH_VERSIONS.includes(version))) {
      const message = `JSON-RPC batches exist only in protocol versions ${BATCH_VERSIONS.join(' and ')}`;
      return send(request, reply, 400, errorResponse(null, { code: ErrorCode.InvalidRequest, message }));
    }
    app.requireScopes(request, reply, calledTools(body));
    let shared: InvocationScope | null = null;
    const answers: Promise<JsonRpcResponse>[] = [];
    for (const item of body) {
      const id: RequestId | null = idOf(item);
      try {
        const classified = classify(item);
        if (classified.kind === 'response') continue;
        eraOf(classified.message, classified.kind === 'request', headers);
        if (classified.kind === 'notification') {
          endpoint.notification(classified.message, session.id ?? '');
          continue;
        }
        if (classified.message.method === 'initialize') throw new ProtocolFault(ErrorCode.InvalidRequest, 'initialize must not be part of a batch');
        const message = classified.message;
        const env: RequestEnv = {
          era: 'handshake',
          sessionKey: session.id ?? '',
          caller: request.caller,
          toolset: request.toolset,
          scope() {
            return (shared ??= scopeFor(request, reply, session));
          },
        };
        answers.push(
          endpoint.request(message, env).then(
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

  const postMcp = (url: string, operationId: string, summary: string) =>
    app.post(
      url,
      {
        validatorCompiler: documentOnly,
        schema: {
          summary,
          operationId,
          tags: ['mcp'],
          body: {
            description: 'a JSON-RPC request, notification or (2024-11-05, 2025-03-26) batch',
            oneOf: [jsonRpcMessageSchema, { type: 'array', items: jsonRpcMessageSchema, minItems: 1 }],
          },
          ...(url !== '/mcp' && {
            params: {
              type: 'object',
              properties: { toolset: { type: 'string', description: 'the toolset this endpoint serves (GET /toolsets)' } },
              required: ['toolset'],
            },
            querystring: {
              type: 'object',
              properties: { discovery: { type: 'string', enum: ['search'], description: "list only tool_search, tool_invoke and the toolset's always tools" } },
            },
          }),
          headers: {
            type: 'object',
            properties: {
              'x-session-id': {
                type: 'string',
                pattern: SESSION_ID.source,
                description: 'the session of every call in this request (wins over Mcp-Session-Id and over a session_id argument)',
              },
              'mcp-session-id': {
                type: 'string',
                pattern: SESSION_ID.source,
                description: 'the session the initialize answer issued; a session_id argument of a session built-in wins over it',
              },
            },
          },
          response: {
            200: {
              description: 'the JSON-RPC response (application/json), or progress notifications then the response (text/event-stream)',
              headers: {
                'mcp-session-id': {
                  type: 'string',
                  description: "on initialize's answer (handshake era) unless X-Session-Id names the session: the session to send back",
                },
              },
              content: { 'application/json': { schema: {} }, 'text/event-stream': { schema: { type: 'string' } } },
            },
            202: { description: 'a notification or response was accepted', type: 'null' },
            403: problemResponse(
              'insufficient-scope: a tools/call names a tool whose access rule needs a scope the user\'s token lacks (WWW-Authenticate: Bearer error="insufficient_scope", scope=…)',
            ),
            400: {
              description: 'a JSON-RPC error: parse error, invalid request, or a header that disagrees with the body',
              content: { 'application/json': { schema: {} } },
            },
            ...(url !== '/mcp' && { 404: problemResponse('no such toolset (or not one this caller is bound to)') }),
          },
        },
      },
      async (request, reply) => {
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
          if (Array.isArray(body)) return await batch(request, reply, body, headers, session);
          const classified = classify(body);
          if (classified.kind === 'response') {
            await endpoint.response(classified.message, request.caller);
            return accepted(reply);
          }
          const era = eraOf(classified.message, classified.kind === 'request', headers);
          if (classified.kind === 'notification') {
            endpoint.notification(classified.message, session.id ?? '');
            return accepted(reply);
          }
          const message = classified.message;
          if (message.method === 'tools/call') app.requireScopes(request, reply, calledTools([message]));
          const sessionKey = message.method === 'initialize' && era === 'handshake' ? issueSession(reply, session) : (session.id ?? '');
          const callScope = message.method === 'tools/call' ? scopeFor(request, reply, session) : null;
          // A method, not a property arrow: tsx would wrap the arrow in a defineProperty per request.
          return await answer(request, reply, message, {
            era,
            sessionKey,
            caller: request.caller,
            toolset: request.toolset,
            scope() {
              return callScope!;
            },
          });
        } catch (err) {
          if (!(err instanceof ProtocolFault)) throw err;
          return send(request, reply, err.status, errorResponse(idOf(body), err.toError()));
        }
      },
    );

  postMcp('/mcp', 'postMcp', 'Model Context Protocol over Streamable HTTP (stateless; 2024-11-05 … 2025-11-25 and 2026-07-28)');
  postMcp(
    '/mcp/:toolset',
    'postMcpToolset',
    "One toolset's own MCP endpoint: everything /mcp does, with only the toolset's tools (intersected with the caller's)",
  );

  const notAllowed = (message: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return send(request, reply, 405, errorResponse(null, { code: ErrorCode.InvalidRequest, message }));
  };
  // Routes that only refuse: their methods are not in the Allow of other answers (src/plugins/methods.ts).
  for (const url of ['/mcp', '/mcp/:toolset']) {
    app.get(
      url,
      { schema: { hide: true }, config: { refusesMethod: true } },
      notAllowed('GET /mcp is not served: toolport opens no server stream; POST JSON-RPC messages'),
    );
    app.delete(
      url,
      { schema: { hide: true }, config: { refusesMethod: true } },
      notAllowed(
        'toolport does not let clients end sessions: the plan and events stay readable and expire SESSION_TTL_S after their last write (an admin may DELETE /sessions/{id})',
      ),
    );
  }
}
