/** GET /tools and GET /tools/{name}: definitions in a provider's shape, with the catalog hash as ETag. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFound } from '../errors.ts';
import { formatByName } from '../formats/index.ts';
import { problemResponses, toolListSchema } from '../schemas.ts';
import { catalogHash, type ToolRegistry } from '../tools/registry.ts';

interface ToolsQuery {
  format?: string;
}

/** Whether If-None-Match names this entity tag (weak or strong, in a list, or `*`). */
function matches(request: FastifyRequest, tag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '');
    return value === '*' || value === `"${tag}"` || value === tag;
  });
}

function sendCached(request: FastifyRequest, reply: FastifyReply, tag: string, body: string): FastifyReply {
  reply.header('etag', `"${tag}"`).header('cache-control', 'no-cache');
  if (matches(request, tag)) return reply.code(304).send();
  return reply.type('application/json').send(body);
}

const formatQuery = {
  type: 'object',
  properties: { format: { type: 'string', description: 'native (default), or a provider format' } },
};

export async function toolRoutes(app: FastifyInstance, { registry }: { registry: ToolRegistry }): Promise<void> {
  /** The catalog cannot change after start, so each answer is built once per format. */
  const cache = new Map<string, { tag: string; body: string }>();

  app.get<{ Querystring: ToolsQuery }>(
    '/tools',
    {
      schema: {
        summary: 'The tools this caller may call, ready to pass to a provider API',
        operationId: 'listTools',
        tags: ['discovery'],
        querystring: formatQuery,
        response: { 200: toolListSchema, ...problemResponses(400) },
      },
    },
    async (request, reply) => {
      const format = formatByName(request.query.format ?? 'native');
      let entry = cache.get(format.name);
      if (entry === undefined) {
        const tools = registry.list();
        const hash = catalogHash(tools);
        entry = { tag: hash, body: JSON.stringify({ tools: tools.map((t) => format.renderTool(t)), hash }) };
        cache.set(format.name, entry);
      }
      return sendCached(request, reply, entry.tag, entry.body);
    },
  );

  app.get<{ Params: { name: string }; Querystring: ToolsQuery }>(
    '/tools/:name',
    {
      schema: {
        summary: "One tool's definition; its ETag is the tool's hash",
        operationId: 'getTool',
        tags: ['discovery'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        querystring: formatQuery,
        response: { 200: { type: 'object', additionalProperties: true }, ...problemResponses(400, 404) },
      },
    },
    async (request, reply) => {
      const format = formatByName(request.query.format ?? 'native');
      const tool = registry.get(request.params.name);
      if (tool === undefined) throw new NotFound(`no tool named "${request.params.name.slice(0, 64)}"`);
      return sendCached(request, reply, tool.hash, JSON.stringify(format.renderTool(tool)));
    },
  );
}
