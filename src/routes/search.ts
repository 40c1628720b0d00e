/** GET /tools/search (docs/toolsets.md): the caller's tools ranked for a natural-language query, in any format. */
import type { FastifyInstance } from 'fastify';
import { wordedPattern } from '../errors.ts';
import { FORMAT_NAMES, formatByName, type Format } from '../formats/index.ts';
import { allowsOf } from '../http/scope.ts';
import { problemResponses } from '../schemas.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import { MAX_LIMIT, MAX_QUERY_CHARS, type ToolSearch } from '../toolsets/search.ts';
import { compressLargeAnswers } from '../http/compress.ts';

interface SearchQuery {
  q?: string;
  limit?: string;
  toolset?: string;
  format?: string;
}

const DEFAULT_LIMIT = 10;
/** A whole number from 1 to 50 (MAX_LIMIT), as one pattern the document can carry too. */
const LIMIT_PATTERN = wordedPattern('^(?:[1-9]|[1-4][0-9]|50)$', `a whole number from 1 to ${MAX_LIMIT}`);

/** Each registered tool's JSON text by format (a changed tool is a new object: its texts go with the old one). */
const texts = new WeakMap<RegisteredTool, Map<string, string>>();

function definitionText(format: Format, tool: RegisteredTool): string {
  let byFormat = texts.get(tool);
  if (byFormat === undefined) texts.set(tool, (byFormat = new Map()));
  let text = byFormat.get(format.name);
  if (text === undefined) byFormat.set(format.name, (text = JSON.stringify(format.renderTool(tool))));
  return text;
}

export async function searchRoutes(app: FastifyInstance, { search }: { search: ToolSearch }): Promise<void> {
  await compressLargeAnswers(app);
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
    async (request, reply) => {
      // The schema has checked q (1–500 characters, not only spaces) and limit (1–50).
      const q = request.query.q!;
      const limit = request.query.limit === undefined ? DEFAULT_LIMIT : Number(request.query.limit);
      const format = formatByName(request.query.format ?? 'native');
      const hits = search.search(q, limit, allowsOf(request));
      // Each definition's text is made once per format and definition; only the scores are new.
      const tools = hits.map((h) => {
        const text = definitionText(format, h.tool);
        return `${text.slice(0, -1)}${text.length > 2 ? ',' : ''}"score":${JSON.stringify(h.score)}}`;
      });
      return reply.type('application/json').send(`{"tools":[${tools.join(',')}],"query":${JSON.stringify(q)}}`);
    },
  );
}
