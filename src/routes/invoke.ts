/** POST /tools/invoke (a call or a turn, in any format) and POST /tools/{name}/invoke (bare arguments). */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fastJson from 'fast-json-stringify';
import { FORMAT_NAMES, parseCalls } from '../formats/index.ts';
import { IDEMPOTENCY_KEY } from '../ledger/key.ts';
import { nativeFormat } from '../formats/native.ts';
import { documentOnly, invocationResultSchema, problemResponse, problemResponses, turnResultSchema } from '../schemas.ts';
import type { Dispatcher } from '../tools/invoke.ts';
import { answerCalls } from '../http/answer-calls.ts';
import { idempotencyKeyOf, keyedCall, markReplayed } from '../http/idempotency.ts';
import { streamInvocation } from '../http/invoke-stream.ts';
import { scopeOf, SESSION_ID, TIMEOUT_MS } from '../http/scope.ts';
import { acceptsEventStream } from '../http/sse.ts';
import { prefersAsync, startTask } from './tasks.ts';
import type { TaskRunner } from '../tasks/runner.ts';

const serializeResult = fastJson(invocationResultSchema);
const serializeTurn = fastJson(turnResultSchema);

const invokeHeaders = {
  type: 'object',
  properties: {
    'x-session-id': { type: 'string', pattern: SESSION_ID.source, description: 'the session of the calls' },
    'idempotency-key': {
      type: 'string',
      pattern: IDEMPOTENCY_KEY.source,
      description: 'ledger key in place of the argument hash (1–255 printable ASCII characters, no spaces)',
    },
    'x-timeout-ms': {
      type: 'string',
      pattern: TIMEOUT_MS.source,
      description: "the caller's deadline for this request: whole milliseconds from 0 to 86400000",
    },
    prefer: { type: 'string', description: 'respond-async: answer 202 at once with a task (GET /tasks/{id} for its result)' },
  },
};

/** Serialized here, so Fastify sends the text as it is instead of running its serialization step. */
function sendJson(request: FastifyRequest, reply: FastifyReply, serialize: (body: object) => string, body: object): FastifyReply {
  markReplayed(reply, body);
  return reply.type('application/json').header('x-request-id', request.id).send(serialize(body));
}

const taskAccepted = {
  202: {
    description: 'with Prefer: respond-async, the task that runs the call (Location: /tasks/{id})',
    content: { 'application/json': { schema: { $ref: 'Task#' } } },
  },
};

/** Refused with 503 while the event loop lags (src/app/http.ts). */
const STARTS_CALLS = { startsCalls: true };

export async function invokeRoutes(
  app: FastifyInstance,
  { dispatcher, tasks, maxContentChars }: { dispatcher: Dispatcher; tasks: TaskRunner; maxContentChars: number },
): Promise<void> {
  app.post<{ Querystring: { format?: string } }>(
    '/tools/invoke',
    {
      config: STARTS_CALLS,
      validatorCompiler: documentOnly,
      schema: {
        summary: 'Run one tool call, or every call of an assistant turn, as the model produced it',
        operationId: 'invokeToolCall',
        tags: ['invoke'],
        querystring: {
          type: 'object',
          properties: { format: { type: 'string', enum: [...FORMAT_NAMES], description: 'the format of the body; detected from its shape when absent' } },
        },
        headers: invokeHeaders,
        body: { description: 'a tool call or an assistant turn in one of the accepted formats' },
        response: {
          200: {
            description: 'the result of each call; with Accept: text/event-stream, `progress` events then one `result` event holding the same JSON',
            content: {
              'application/json': { schema: { oneOf: [invocationResultSchema, turnResultSchema] } },
              'text/event-stream': { schema: { type: 'string' } },
            },
          },
          ...taskAccepted,
          ...problemResponses(400, 409, 413, 415, 422, 503),
          403: problemResponse(
            "insufficient-scope: the user's access token lacks the scope (named in `scope` and in WWW-Authenticate) that an access rule needs for a tool called",
          ),
        },
      },
    },
    async (request, reply) => {
      const { format, parsed } = parseCalls(request.body, request.query.format);
      app.requireScopes(
        request,
        reply,
        parsed.calls.map((call) => call.name),
      );
      const scope = scopeOf(request, reply, format.name);
      const key = idempotencyKeyOf(request);
      const calls = { turn: parsed.turn, calls: parsed.calls.map((call, i) => keyedCall(call, key, parsed.turn ? i : undefined)) };
      if (prefersAsync(request)) return startTask(tasks, reply, format.name, calls, scope);
      if (acceptsEventStream(request)) return streamInvocation(request, reply, scope, (s) => answerCalls(dispatcher, format, calls, s, maxContentChars));
      const body = await answerCalls(dispatcher, format, calls, scope, maxContentChars);
      return sendJson(request, reply, parsed.turn ? serializeTurn : serializeResult, body);
    },
  );

  app.post<{ Params: { name: string } }>(
    '/tools/:name/invoke',
    {
      config: STARTS_CALLS,
      validatorCompiler: documentOnly,
      schema: {
        summary: 'Run one tool with its bare arguments object as the body',
        operationId: 'invokeToolByName',
        tags: ['invoke'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        headers: invokeHeaders,
        body: { type: 'object', description: "the tool's arguments" },
        response: {
          200: {
            description: 'the result; with Accept: text/event-stream, `progress` events then one `result` event holding the same JSON',
            content: { 'application/json': { schema: invocationResultSchema }, 'text/event-stream': { schema: { type: 'string' } } },
          },
          ...taskAccepted,
          ...problemResponses(400, 409, 413, 415, 422, 503),
          403: problemResponse(
            "insufficient-scope: the user's access token lacks the scope (named in `scope` and in WWW-Authenticate) that an access rule needs for a tool called",
          ),
        },
      },
    },
    async (request, reply) => {
      app.requireScopes(request, reply, [request.params.name]);
      const scope = scopeOf(request, reply, nativeFormat.name);
      const call = keyedCall({ id: null, name: request.params.name, arguments: request.body ?? {}, parsed: true }, idempotencyKeyOf(request));
      const calls = { calls: [call], turn: false };
      if (prefersAsync(request)) return startTask(tasks, reply, nativeFormat.name, calls, scope);
      if (acceptsEventStream(request)) return streamInvocation(request, reply, scope, (s) => answerCalls(dispatcher, nativeFormat, calls, s, maxContentChars));
      return sendJson(request, reply, serializeResult, await answerCalls(dispatcher, nativeFormat, calls, scope, maxContentChars));
    },
  );
}
