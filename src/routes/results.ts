/** GET /results/{id}: the whole of a result whose content was cut (docs/large-results.md), for the caller that made the call. */
import type { FastifyInstance } from 'fastify';
import { NotFound } from '../errors.ts';
import { problemResponses } from '../schemas.ts';
import { RESULT_ID_PATTERN, resultRef, type ResultResources } from '../store/results.ts';

const keptResultSchema = {
  type: 'object',
  properties: {
    uri: { type: 'string', description: 'toolport://results/<id>, for MCP resources/read and the result_read tool' },
    url: { type: 'string' },
    tool: { type: 'string' },
    call_id: { type: 'string' },
    chars: { type: 'integer', description: 'the length of content' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time', description: 'created_at + RESULT_TTL_S' },
    content: { type: 'string', description: 'the whole text the model would have seen, uncut' },
  },
  required: ['uri', 'url', 'tool', 'call_id', 'chars', 'created_at', 'expires_at', 'content'],
};

export async function resultRoutes(app: FastifyInstance, { results }: { results: Pick<ResultResources, 'read'> }): Promise<void> {
  app.get<{ Params: { id: string } }>(
    '/results/:id',
    {
      schema: {
        summary: 'The whole of a large result whose content was cut, for the caller that made the call',
        operationId: 'getResult',
        tags: ['results'],
        params: { type: 'object', properties: { id: { type: 'string', pattern: RESULT_ID_PATTERN } }, required: ['id'] },
        response: { 200: keptResultSchema, ...problemResponses(400, 404, 503) },
      },
    },
    async (request) => {
      const kept = await results.read(request.params.id, request.caller?.id ?? null, request.caller?.admin);
      // Another caller's result answers as an unknown one: its existence is not told.
      if (kept === null) throw new NotFound(`no result ${request.params.id}: results are kept for RESULT_TTL_S after the call, for the caller that made it`);
      return {
        ...resultRef(kept.id, kept.content.length),
        tool: kept.tool,
        call_id: kept.callId,
        created_at: new Date(kept.createdAt).toISOString(),
        expires_at: new Date(kept.expiresAt).toISOString(),
        content: kept.content,
      };
    },
  );
}
