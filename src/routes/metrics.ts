/** GET /metrics: Prometheus text exposition. */
import type { FastifyInstance } from 'fastify';
import type { Metrics } from '../metrics.ts';

export async function metricsRoutes(app: FastifyInstance, { metrics }: { metrics: Metrics }): Promise<void> {
  app.get(
    '/metrics',
    {
      schema: {
        summary: 'Prometheus metrics: calls by tool and outcome, durations, conflicts, ledger, store errors, process',
        operationId: 'getMetrics',
        tags: ['operations'],
        response: { 200: { description: 'Prometheus text format', content: { 'text/plain': { schema: { type: 'string' } } } } },
      },
    },
    async (_request, reply) => reply.type(metrics.registry.contentType).send(await metrics.registry.metrics()),
  );
}
