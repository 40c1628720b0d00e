/**
 * GET /sources: where the caller's tools come from — built-ins, plugins, HTTP entries, OpenAPI
 * documents, MCP servers — with each upstream's health as this replica sees it (its connection,
 * its latest calls, its last failure, pinned changes waiting for an admin).
 */
import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../schemas.ts';
import type { UpstreamStatus } from '../sources/types.ts';
import type { BreakerState, GuardView } from '../sources/upstream/guard.ts';
import { SOURCE_KINDS, type SourceKind } from '../tools/source.ts';

interface SourceAnswer {
  name: string;
  kind: SourceKind;
  tools: string[];
  state: 'up' | 'degraded' | 'down' | 'unknown';
  reason: string | null;
  calls: number;
  failures: number;
  last_error: { code: string; detail: string; at: string } | null;
  pending: number;
  breaker: BreakerState;
  guards: readonly GuardView[];
}

const failureSchema = {
  type: ['object', 'null'],
  required: ['code', 'detail', 'at'],
  properties: { code: { type: 'string' }, detail: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
  description: "the upstream's last failure (unreachable, failing or too slow) seen by this replica",
};

const nullableInteger = { type: ['integer', 'null'] };

const guardSchema = {
  type: 'object',
  required: ['upstream', 'breaker', 'retry_after_s', 'failures_in_row', 'opened', 'in_flight', 'queued', 'rejected', 'limits'],
  properties: {
    upstream: { type: 'string', description: 'what is guarded: an origin, or stdio for an MCP server run as a child' },
    breaker: {
      type: 'string',
      enum: ['closed', 'open', 'half_open'],
      description: 'open: calls answer upstream_unavailable at once; half_open: one call probes',
    },
    retry_after_s: { ...nullableInteger, description: 'while open: seconds until a call may probe' },
    failures_in_row: { type: 'integer', description: 'failures or time-outs in a row (the breaker opens at limits.failures)' },
    opened: { type: 'integer', description: 'how often the breaker opened since the start' },
    in_flight: { type: 'integer', description: 'calls at the upstream now' },
    queued: { type: 'integer', description: 'calls waiting for a place (max_concurrency)' },
    rejected: {
      type: 'object',
      required: ['open', 'busy', 'rate'],
      properties: { open: { type: 'integer' }, busy: { type: 'integer' }, rate: { type: 'integer' } },
      description: 'calls answered without reaching the upstream: breaker open, no place in time, rate reached',
    },
    limits: {
      type: 'object',
      required: ['failures', 'open_s', 'max_concurrency', 'rate_per_min', 'rate_per_min_per_caller'],
      properties: {
        failures: nullableInteger,
        open_s: { type: 'number' },
        max_concurrency: nullableInteger,
        rate_per_min: nullableInteger,
        rate_per_min_per_caller: nullableInteger,
      },
    },
  },
};

const sourceListSchema = {
  type: 'object',
  required: ['sources'],
  properties: {
    sources: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'kind', 'tools', 'state', 'reason', 'calls', 'failures', 'last_error', 'pending', 'breaker', 'guards'],
        properties: {
          name: { type: 'string', description: 'the source name of an OpenAPI document or MCP server; built-in, http, or a plugin file' },
          kind: { type: 'string', enum: SOURCE_KINDS },
          tools: { type: 'array', items: { type: 'string' }, description: 'its tools this caller may call' },
          state: {
            type: 'string',
            enum: ['up', 'degraded', 'down', 'unknown'],
            description: 'down: its connection is lost or its last calls all failed; degraded: some of its last 20 calls failed; unknown: no call yet',
          },
          reason: { type: ['string', 'null'], description: 'why its connection is down, or which upstream has an open breaker' },
          calls: { type: 'integer', description: 'its latest calls counted in state (at most 20)' },
          failures: { type: 'integer', description: 'how many of them failed' },
          last_error: failureSchema,
          pending: { type: 'integer', description: 'pinned tools whose upstream definition changed and waits for an admin' },
          breaker: { type: 'string', enum: ['closed', 'open', 'half_open'], description: "the least healthy of its upstreams' circuit breakers" },
          guards: {
            type: 'array',
            items: guardSchema,
            description: 'its breaker and limits: one per origin for the HTTP tools, one for an OpenAPI source or MCP server',
          },
        },
      },
    },
  },
};

const BREAKER_RANK: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** The state a source shows: an open breaker on every upstream is down; on some of them, degraded. */
function stateOf(upstream: UpstreamStatus, breaker: BreakerState): SourceAnswer['state'] {
  if (!upstream.up) return 'down';
  if (breaker === 'closed') return upstream.calls.state;
  return upstream.guards.every((g) => g.breaker !== 'closed') ? 'down' : 'degraded';
}

function answerOf(name: string, kind: SourceKind, tools: string[], upstream: UpstreamStatus | undefined): SourceAnswer {
  if (upstream === undefined)
    return { name, kind, tools, state: 'up', reason: null, calls: 0, failures: 0, last_error: null, pending: 0, breaker: 'closed', guards: [] };
  const { calls, guards } = upstream;
  const breaker = guards.reduce<BreakerState>((worst, g) => (BREAKER_RANK[g.breaker] > BREAKER_RANK[worst] ? g.breaker : worst), 'closed');
  const open = guards.find((g) => g.breaker !== 'closed');
  const reason =
    upstream.reason ??
    (open === undefined ? null : `circuit breaker ${open.breaker.replace('_', '-')} for ${open.upstream} after ${open.failures_in_row} failures in a row`);
  return {
    name,
    kind,
    tools,
    state: stateOf(upstream, breaker),
    reason,
    calls: calls.calls,
    failures: calls.failures,
    last_error: calls.last_error,
    pending: upstream.pending,
    breaker,
    guards,
  };
}

export async function sourceRoutes(app: FastifyInstance, { upstreams }: { upstreams: () => readonly UpstreamStatus[] }): Promise<void> {
  app.get(
    '/sources',
    {
      schema: {
        summary: "Where the caller's tools come from, and each upstream's health as this replica sees it",
        operationId: 'listSources',
        tags: ['health'],
        response: { 200: sourceListSchema, ...problemResponses(401, 429) },
      },
    },
    async (request) => {
      const caller = request.caller;
      // OpenAPI and MCP source names are unique together; the HTTP tools are one upstream, `http`.
      const known = new Map(upstreams().map((u) => [`${u.kind}:${u.source}`, u]));
      const grouped = new Map<string, { name: string; kind: SourceKind; tools: string[] }>();
      for (const tool of app.toolport.registry.list()) {
        if (caller !== null && !caller.allows(tool.name)) continue;
        const { name, kind } = tool.source;
        const key = `${kind}:${name}`;
        let group = grouped.get(key);
        if (group === undefined) grouped.set(key, (group = { name, kind, tools: [] }));
        group.tools.push(tool.name);
      }
      const sources = [...grouped.entries()].map(([key, g]) => answerOf(g.name, g.kind, g.tools.sort(), known.get(key)));
      // An upstream with no tools yet (an MCP server that has not answered) is shown to those who may see everything.
      if (caller === null || caller.admin) {
        for (const [key, u] of known) if (!grouped.has(key)) sources.push(answerOf(u.source, u.kind, [], u));
      }
      return { sources };
    },
  );
}
