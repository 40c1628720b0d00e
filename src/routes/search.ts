/** GET /tools/search (SPEC §16): the caller's tools ranked for a natural-language query, in any format. */
import type { FastifyInstance } from 'fastify';
import { wordedPattern } from '../errors.ts';
import { FORMAT_NAMES, formatByName } from '../formats/index.ts';
import { allowsOf } from '../http/scope.ts';
import { problemResponses } from '../schemas.ts';
import { MAX_LIMIT, MAX_QUERY_CHARS, type ToolSearch } from '../toolsets/search.ts';

interface SearchQuery {
  q?: string;
  limit?: string;
  toolset?: string;
  format?: string;
}

const DEFAULT_LIMIT = 10;
/** A whole number from 1 to 50 (MAX_LIMIT), as one pattern the document can carry too. */
const LIMIT_PATTERN = wordedPattern('^(?:[1-9]|[1-4][0-9]|50)$', `a whole number from 1 to ${MAX_LIMIT}`);

export async function searchRoutes(app: FastifyInstance, { search }: { search: ToolSearch }): Promise<void> {
  app.get<{ Querystring: SearchQuery }>(
    '/tools/search',
    {
      schema: {
        summary: "The caller's tools ranked for a natural-language query (BM25+ over names, descriptions, parameters, source), best first",
        operationId: 'searchTools',
        tags: ['discovery'],
        querystring: {
          type: 'object',
          required: ['q'],
          properties: {
            q: {
              type: 'string',
              minLength: 1,
              maxLength: MAX_QUERY_CHARS,
              pattern: '\\S',
              description: `what the tool should do, 1–${MAX_QUERY_CHARS} characters, not only spaces`,
            },
            limit: { type: 'string', pattern: LIMIT_PATTERN, description: `how many tools at most, 1–${MAX_LIMIT} (default ${DEFAULT_LIMIT})` },
            toolset: { type: 'string', description: 'search only this toolset; a toolset that does not exist answers 404' },
            format: { type: 'string', enum: [...FORMAT_NAMES], description: 'the provider whose shape the definitions take (default native)' },
          },
        },
        response: {
          200: {
            type: 'object',
            required: ['tools', 'query'],
            properties: {
              tools: {
                type: 'array',
                items: { type: 'object', additionalProperties: true, description: "a definition in the format's shape, with its score" },
              },
              query: { type: 'string' },
            },
          },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request) => {
      // The schema has checked q (1–500 characters, not only spaces) and limit (1–50).
      const q = request.query.q!;
      const limit = request.query.limit === undefined ? DEFAULT_LIMIT : Number(request.query.limit);
      const format = formatByName(request.query.format ?? 'native');
      const hits = search.search(q, limit, allowsOf(request));
      return { tools: hits.map((h) => ({ ...(format.renderTool(h.tool) as Record<string, unknown>), score: h.score })), query: q };
    },
  );
}
