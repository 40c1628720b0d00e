/** Session reads and removal (docs/sessions-and-planning.md), and the planning tools' system-prompt section. */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { NotFound } from '../errors.ts';
import { problemResponses } from '../schemas.ts';
import { planningInstructions, STRATEGIES, type PlanningStrategy } from '../sessions/planning/instructions.ts';
import { readPlan } from '../sessions/planning/plan.ts';
import { planSchema } from '../sessions/planning/tools.ts';
import { StagedSession } from '../sessions/staged.ts';
import type { Store } from '../store/types.ts';
import { ownedSessions, type SessionStore } from '../store/owned-sessions.ts';
import { numberedEvents } from '../sessions/events.ts';
import { SESSION_ID } from '../http/scope.ts';

const MAX_PAGE = 1000;

const ownerQuery = {
  owner: { type: 'string', minLength: 1, maxLength: 300, description: "admins only: whose session (an API key id or user:<sub>); default the caller's own" },
};

/**
 * The sessions the request may see: its caller's own (src/store/owned-sessions.ts); an admin may name
 * another owner. A non-admin naming someone else finds nothing, as for any session not theirs.
 */
function sessionsOf(store: Store, request: FastifyRequest<{ Params: { id: string }; Querystring: { owner?: string } }>): SessionStore {
  const caller = request.caller;
  const owner = request.query.owner;
  if (owner === undefined || caller === null) return ownedSessions(store, caller?.id ?? null);
  if (!caller.admin && owner !== caller.id) throw new NotFound(`session "${request.params.id}" not found`);
  return ownedSessions(store, owner);
}

const sessionParams = {
  type: 'object',
  properties: { id: { type: 'string', pattern: SESSION_ID.source, description: 'the X-Session-Id' } },
  required: ['id'],
};

const eventsPageSchema = {
  type: 'object',
  properties: {
    session_id: { type: 'string' },
    events: {
      type: 'array',
      description: 'ToolInvoked events, oldest first, each with its sequence number `seq`',
      items: { type: 'object', additionalProperties: true, properties: { seq: { type: 'integer' } } },
    },
    total: { type: 'integer', description: 'events ever logged in this session (the oldest beyond SESSION_MAX_EVENTS are dropped)' },
    next_after: { type: ['integer', 'null'], description: 'pass as `after` for the next page; null on the last page' },
  },
  required: ['session_id', 'events', 'total', 'next_after'],
};

export async function sessionRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  app.get<{ Params: { id: string }; Querystring: { owner?: string } }>(
    '/sessions/:id/plan',
    {
      schema: {
        summary: "The session's plan (planning tools)",
        operationId: 'getSessionPlan',
        tags: ['sessions'],
        params: sessionParams,
        querystring: { type: 'object', properties: ownerQuery },
        response: { 200: planSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const plan = await readPlan(new StagedSession(sessionsOf(store, request), request.params.id));
      if (plan === undefined) throw new NotFound(`session "${request.params.id}" has no plan`);
      return plan;
    },
  );

  app.get<{ Params: { id: string }; Querystring: { after: number; limit: number; owner?: string } }>(
    '/sessions/:id/events',
    {
      schema: {
        summary: "The session's ToolInvoked events, oldest first, a page at a time",
        operationId: 'listSessionEvents',
        tags: ['sessions'],
        params: sessionParams,
        querystring: {
          type: 'object',
          properties: {
            after: { type: 'integer', minimum: 0, default: 0, description: 'only events with a greater seq' },
            limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: 100 },
            ...ownerQuery,
          },
        },
        response: { 200: eventsPageSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const { after, limit } = request.query;
      const page = await sessionsOf(store, request).sessionEvents(request.params.id, after, limit);
      const events = numberedEvents(page);
      const last = page.firstSeq + events.length - 1;
      return { session_id: request.params.id, events, total: page.total, next_after: events.length === limit && last < page.total ? last : null };
    },
  );

  app.delete<{ Params: { id: string }; Querystring: { owner?: string } }>(
    '/sessions/:id',
    {
      config: { admin: true },
      schema: {
        summary: "Remove the session's state and events (idempotent)",
        operationId: 'deleteSession',
        tags: ['sessions'],
        params: sessionParams,
        querystring: { type: 'object', properties: ownerQuery },
        response: { 204: { description: 'removed, or there was nothing to remove', type: 'null' }, ...problemResponses(400, 401, 403, 503) },
      },
    },
    async (request, reply) => {
      await sessionsOf(store, request).deleteSession(request.params.id);
      return reply.code(204).send();
    },
  );

  app.get<{ Querystring: { strategy: PlanningStrategy } }>(
    '/planning/instructions',
    {
      schema: {
        summary: 'The planning tools section of a system prompt, for a reasoning strategy',
        operationId: 'getPlanningInstructions',
        tags: ['sessions'],
        querystring: {
          type: 'object',
          properties: { strategy: { type: 'string', enum: [...STRATEGIES], default: 'react' } },
        },
        response: { 200: { description: 'markdown', content: { 'text/markdown': { schema: { type: 'string' } } } }, ...problemResponses(400) },
      },
    },
    async (request, reply) => reply.type('text/markdown; charset=utf-8').send(planningInstructions(request.query.strategy)),
  );
}
