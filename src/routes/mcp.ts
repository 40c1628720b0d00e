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
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { McpApprovals } from '../mcp/approval.ts';
import type { McpClients } from '../mcp/client-approval.ts';
import { McpEndpoint } from '../mcp/endpoint.ts';
import { errorResponse, ErrorCode } from '../mcp/protocol.ts';
import { McpTasks } from '../mcp/tasks.ts';
import type { Metrics } from '../metrics.ts';
import { documentOnly, problemResponse } from '../schemas.ts';
import type { ResultResources } from '../store/results.ts';
import type { TaskRunner } from '../tasks/runner.ts';
import type { Dispatcher } from '../tools/invoke.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { SESSION_ID } from '../http/scope.ts';
import { McpPost, send } from './mcp-post.ts';
import type { McpClientStore } from '../store/mcp-clients.ts';
import { ClientAnswers } from '../mcp/client-channel.ts';
import { McpSubscriptions } from '../mcp/subscriptions.ts';
import { acceptsEventStream, EventStreamReply } from '../http/sse.ts';

/**
 * Connections that never carried a request: a client that opens its session stream beside its
 * requests may open one and abandon it when it closes, and the server's close would wait for it.
 */
function unusedConnections(app: FastifyInstance): Set<Socket> {
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  app.server.on('request', (request: { socket: Socket }) => unused.delete(request.socket));
  return unused;
}

/** GET /mcp with a session: the session's stream, where `notifications/resources/updated` arrive until the client goes away. */
function openSessionStream(request: FastifyRequest, reply: FastifyReply, subscriptions: McpSubscriptions, session: string): FastifyReply {
  const stream = new EventStreamReply(request, reply);
  stream.events('message', []);
  reply.raw.write(': the session stream is open\n\n');
  const forget = subscriptions.open(request.caller?.id ?? null, session, stream);
  reply.raw.on('close', forget);
  return reply;
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

/** The document's description of POST `url` (/mcp, or a toolset's own /mcp/{toolset}). */
function postSchema(url: string) {
  return {
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
  };
}

export async function mcpRoutes(
  app: FastifyInstance,
  options: {
    dispatcher: Dispatcher;
    registry: ToolRegistry;
    version: string;
    /** MAX_CONTENT_CHARS: where a tools/call answer's text is cut. */
    maxContentChars: number;
    metrics?: Metrics;
    tasks?: TaskRunner;
    results?: Pick<ResultResources, 'read'>;
    taskInlineMs?: number;
    approvals?: McpApprovals;
    clients?: McpClients;
    /** The MCP session store and how long a session lives: handlers' questions, log levels, subscriptions. */
    sessions?: { store: McpClientStore; ttlMs: number };
  },
): Promise<void> {
  const sessions = options.sessions;
  const answers = sessions === undefined ? null : new ClientAnswers(sessions.store, sessions.ttlMs);
  const subscriptions = sessions === undefined ? null : new McpSubscriptions(sessions.store, options.registry.entries, sessions.ttlMs);
  // Before the server closes: an open session stream would keep it waiting.
  if (subscriptions !== null) {
    const unused = unusedConnections(app);
    app.addHook('preClose', async () => {
      subscriptions.close();
      for (const socket of unused) socket.destroy();
    });
  }
  const endpoint = new McpEndpoint(
    options.dispatcher,
    options.registry,
    options.version,
    options.maxContentChars,
    options.tasks ? new McpTasks(options.tasks, options.taskInlineMs) : null,
    options.results ?? null,
    options.approvals ?? null,
    options.clients ?? null,
    answers,
    subscriptions,
  );
  const post = new McpPost(app, endpoint, options.metrics);

  // The body is parsed by McpPost, not by the app's parser, so that bad JSON answers JSON-RPC -32700.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const postMcp = (url: string, operationId: string, summary: string) =>
    app.post(url, { config: { startsCalls: true }, validatorCompiler: documentOnly, schema: { summary, operationId, ...postSchema(url) } }, (request, reply) =>
      post.handle(request, reply),
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
  // Routes that only refuse: their methods are not in the Allow of other answers (src/http/methods.ts).
  const noStream = notAllowed('GET /mcp without Mcp-Session-Id opens nothing: toolport opens a session stream (resource updates) only; POST JSON-RPC messages');
  for (const url of ['/mcp', '/mcp/:toolset']) {
    app.get(url, { schema: { hide: true }, config: { refusesMethod: true } }, (request, reply) => {
      const session = request.headers['mcp-session-id'];
      if (subscriptions === null || typeof session !== 'string' || !SESSION_ID.test(session) || !acceptsEventStream(request)) return noStream(request, reply);
      return openSessionStream(request, reply, subscriptions, session);
    });
    app.delete(
      url,
      { schema: { hide: true }, config: { refusesMethod: true } },
      notAllowed(
        'toolport does not let clients end sessions: the plan and events stay readable and expire SESSION_TTL_S after their last write (an admin may DELETE /sessions/{id})',
      ),
    );
  }
}
