/**
 * The recent calls, for the console (docs/console.md): GET /calls answers the newest, GET /calls/stream
 * sends them and then every new one as Server-Sent Events. Each caller sees what entryFor allows.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { entryFor, type CallFeed, type CallRecord } from '../calls/feed.ts';
import { problemResponses } from '../schemas.ts';
import { EventStreamReply } from '../http/sse.ts';
import { SESSION_ID } from '../http/scope.ts';

const MAX_LIMIT = 500;
const KEEP_ALIVE_MS = 15_000;

const callEntrySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', description: 'unique per entry' },
    at: { type: 'string', format: 'date-time', description: 'when the call finished' },
    tool: { type: 'string' },
    known: { type: 'boolean', description: 'false when no tool of that name exists for the caller' },
    call_id: { type: 'string' },
    parent_call_id: { type: ['string', 'null'], description: 'the call that made this one with context.invoke' },
    request_id: { type: 'string' },
    session: { type: ['string', 'null'] },
    caller: { type: ['string', 'null'], description: 'the API key id' },
    success: { type: 'boolean' },
    outcome: { type: 'string', description: '`success` or the error code' },
    error_code: { type: ['string', 'null'] },
    duration_ms: { type: 'number' },
    replayed: { type: 'boolean' },
    arguments: { description: 'admin keys only; a string preview when the JSON passes 4,000 characters' },
    result: { description: 'admin keys only: {message, value, error, idempotency_key}, cut the same way' },
  },
  required: [
    'id',
    'at',
    'tool',
    'known',
    'call_id',
    'parent_call_id',
    'request_id',
    'session',
    'caller',
    'success',
    'outcome',
    'error_code',
    'duration_ms',
    'replayed',
  ],
};

interface CallsQuery {
  limit: number;
  session?: string;
  tool?: string;
}

const callsQuery = {
  type: 'object',
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 100, description: 'how many of the newest calls (before the filters)' },
    session: { type: 'string', pattern: SESSION_ID.source, description: 'only the calls of this session' },
    tool: { type: 'string', maxLength: 128, description: 'only the calls of this tool' },
  },
};

/** Whether the filters of the request keep the call. */
function kept(request: FastifyRequest<{ Querystring: CallsQuery }>, record: CallRecord): boolean {
  const { session, tool } = request.query;
  return (session === undefined || record.session === session) && (tool === undefined || record.tool === tool);
}

/** The entries' JSON as this request may see them, leaving out what it may not see or filters out. */
function shownJson(request: FastifyRequest<{ Querystring: CallsQuery }>, records: readonly CallRecord[]): string[] {
  const texts: string[] = [];
  for (const record of records) {
    if (!kept(request, record)) continue;
    const json = record.jsonFor(request.caller);
    if (json !== null) texts.push(json);
  }
  return texts;
}

export async function callRoutes(app: FastifyInstance, { feed }: { feed: CallFeed }): Promise<void> {
  /** Open streams, ended when the app closes (an open stream would hold the close forever). */
  const streams = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const end of streams) end();
  });

  app.get<{ Querystring: CallsQuery }>(
    '/calls',
    {
      schema: {
        summary: 'The newest calls, newest first (arguments and results for admin keys only)',
        operationId: 'listCalls',
        tags: ['console'],
        querystring: callsQuery,
        response: {
          200: { type: 'object', properties: { calls: { type: 'array', items: callEntrySchema } }, required: ['calls'] },
          ...problemResponses(400, 401, 429, 503),
        },
      },
    },
    async (request) => {
      const calls = (await feed.recent(request.query.limit)).flatMap((record) => (kept(request, record) && entryFor(request.caller, record.entry())) || []);
      return { calls };
    },
  );

  app.get<{ Querystring: CallsQuery }>(
    '/calls/stream',
    {
      schema: {
        summary: 'The newest calls, oldest first, then every new call as it finishes (Server-Sent Events)',
        description:
          'Each call is an SSE event `call` whose data is one call entry (as in GET /calls) and whose `id` is the entry id. ' +
          'A `ready` event follows the recent calls; a `ping` event every 15 s keeps the stream open. A call may be sent twice around `ready`: its id tells.',
        operationId: 'streamCalls',
        tags: ['console'],
        querystring: callsQuery,
        response: {
          200: { description: 'an event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } },
          ...problemResponses(400, 401, 429, 503),
        },
      },
    },
    async (request, reply) => {
      // Subscribed before the recent calls are read, so none falls between the two. Each batch is
      // one write; each entry's JSON is made once for every stream that shows it.
      const early: CallRecord[] = [];
      let stream: EventStreamReply | null = null;
      const send = (records: readonly CallRecord[]) => stream?.events('call', shownJson(request, records));
      const unsubscribe = feed.subscribe((records) => (stream === null ? early.push(...records) : send(records)));
      let recent: CallRecord[];
      try {
        recent = await feed.recent(request.query.limit);
      } catch (err) {
        unsubscribe();
        throw err; // nothing sent yet: a problem answer (503 when the store is down)
      }
      stream = new EventStreamReply(request, reply);
      send(recent.reverse());
      stream.event('ready', { recent: recent.length });
      send(early);

      const keepAlive = setInterval(() => stream?.event('ping', {}), KEEP_ALIVE_MS);
      const end = () => {
        clearInterval(keepAlive);
        unsubscribe();
        streams.delete(end);
        stream?.end();
      };
      streams.add(end);
      reply.raw.once('close', end);
      return reply;
    },
  );
}
