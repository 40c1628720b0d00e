/** GET /healthz (the process answers) and GET /readyz (the store answers too). */
import type { FastifyInstance } from 'fastify';
import { problemResponses } from '../schemas.ts';
import type { Store } from '../store/types.ts';

export async function healthRoutes(app: FastifyInstance, { store }: { store: Store }): Promise<void> {
  const status = { type: 'object', properties: { status: { type: 'string' }, store: { type: 'string' } } };
  app.get('/healthz', { schema: { summary: 'Liveness', operationId: 'healthz', tags: ['health'], security: [], response: { 200: status } } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    { schema: { summary: 'Readiness: the store is reachable', operationId: 'readyz', tags: ['health'], security: [], response: { 200: status, ...problemResponses(503) } } },
    async () => {
      await store.ping();
      return { status: 'ready', store: store.kind };
    },
  );
}
