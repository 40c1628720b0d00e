/** GET /caller: who the request's API key is and what it may do, so a page can show only that. */
import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../schemas.ts';

const callerSchema = {
  type: 'object',
  properties: {
    id: { type: ['string', 'null'], description: 'the API key id; null when the service has no API keys' },
    admin: { type: 'boolean', description: 'may use the admin routes (true when the service has no API keys)' },
    keys_required: { type: 'boolean', description: 'whether the service asks for API keys' },
  },
  required: ['id', 'admin', 'keys_required'],
};

export async function callerRoutes(app: FastifyInstance, { keysRequired }: { keysRequired: boolean }): Promise<void> {
  app.get(
    '/caller',
    {
      schema: {
        summary: 'The API key this request was made with, and whether it is an admin key',
        operationId: 'getCaller',
        tags: ['console'],
        response: { 200: callerSchema, ...problemResponses(401, 429) },
      },
    },
    async (request) => ({ id: request.caller?.id ?? null, admin: request.caller?.admin ?? !keysRequired, keys_required: keysRequired }),
  );
}
