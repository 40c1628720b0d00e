/**
 * GET /sources: where the caller's tools come from — built-ins, plugins, HTTP entries, OpenAPI
 * documents, MCP servers — with each upstream's health as this replica sees it (its connection,
 * its latest calls, its last failure, pinned changes waiting for an admin).
 */
import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../schemas.ts';
import type { UpstreamStatus } from '../sources/types.ts';
import type { RegisteredTool } from '../tools/registry.ts';

type SourceKind = 'builtin' | 'plugin' | 'http' | 'openapi' | 'mcp';

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
}

/** The source a registered tool came from, as GET /sources names it (an upstream's kind comes from its status). */
function sourceOf(tool: RegisteredTool): { name: string; kind: SourceKind | 'upstream' } {
  const label = tool.source;
  if (tool.hints !== null) return { name: tool.hints.source, kind: 'upstream' };
  if (label.startsWith('built-in ')) return { name: 'built-in', kind: 'builtin' };
  if (label.startsWith('TOOLS_FILE ')) return { name: 'http', kind: 'http' };
  // A plugin: as TOOL_PLUGINS or the tools file names it (a package, a relative path); an absolute path by its file's name only.
  const absolute = label.startsWith('/') || /^[A-Za-z]:[\\/]/.test(label);
  const name = absolute ? (label.split(/[\\/]/).pop() ?? label) : label;
  return { name, kind: 'plugin' };
}

const failureSchema = {
  type: ['object', 'null'],
  required: ['code', 'detail', 'at'],
  properties: { code: { type: 'string' }, detail: { type: 'string' }, at: { type: 'string', format: 'date-time' } },
  description: "the upstream's last failure (unreachable, failing or too slow) seen by this replica",
};

const sourceListSchema = {
  type: 'object',
  required: ['sources'],
  properties: {
    sources: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'kind', 'tools', 'state', 'reason', 'calls', 'failures', 'last_error', 'pending'],
        properties: {
          name: { type: 'string', description: 'the source name of an OpenAPI document or MCP server; built-in, http, or a plugin file' },
          kind: { type: 'string', enum: ['builtin', 'plugin', 'http', 'openapi', 'mcp'] },
          tools: { type: 'array', items: { type: 'string' }, description: 'its tools this caller may call' },
          state: {
            type: 'string',
            enum: ['up', 'degraded', 'down', 'unknown'],
            description: 'down: its connection is lost or its last calls all failed; degraded: some of its last 20 calls failed; unknown: no call yet',
          },
          reason: { type: ['string', 'null'], description: 'why its connection is down' },
          calls: { type: 'integer', description: 'its latest calls counted in state (at most 20)' },
          failures: { type: 'integer', description: 'how many of them failed' },
          last_error: failureSchema,
          pending: { type: 'integer', description: 'pinned tools whose upstream definition changed and waits for an admin' },
        },
      },
    },
  },
};

function answerOf(name: string, kind: SourceKind, tools: string[], upstream: UpstreamStatus | undefined): SourceAnswer {
  if (upstream === undefined) return { name, kind, tools, state: 'up', reason: null, calls: 0, failures: 0, last_error: null, pending: 0 };
  const { calls } = upstream;
  return {
    name,
    kind,
    tools,
    state: upstream.up ? calls.state : 'down',
    reason: upstream.reason,
    calls: calls.calls,
    failures: calls.failures,
    last_error: calls.last_error,
    pending: upstream.pending,
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
      const known = new Map(upstreams().map((u) => [u.kind === 'http' ? 'http:http' : `upstream:${u.source}`, u]));
      const grouped = new Map<string, { name: string; kind: SourceKind; tools: string[] }>();
      for (const tool of app.toolport.registry.list()) {
        if (caller !== null && !caller.allows(tool.name)) continue;
        const { name, kind } = sourceOf(tool);
        const key = `${kind}:${name}`;
        let group = grouped.get(key);
        if (group === undefined) grouped.set(key, (group = { name, kind: kind === 'upstream' ? (known.get(key)?.kind ?? 'openapi') : kind, tools: [] }));
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
