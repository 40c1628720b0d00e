/** GET /healthz (the process answers), GET /readyz (the store answers too; MCP servers down are named) and GET /sources. */
import type { FastifyInstance } from 'fastify';
import { NotReady } from '../errors.ts';
import type { EventLoopGuard } from '../http/event-loop.ts';
import { problemResponses } from '../schemas.ts';
import type { UpstreamStatus } from '../sources/types.ts';
import type { Store } from '../store/types.ts';
import { sourceRoutes } from './sources.ts';

export interface HealthOptions {
  store: Store;
  /** The upstreams behind toolport (MCP servers, OpenAPI documents, HTTP tools) and their health. */
  upstreams?: () => readonly UpstreamStatus[];
  /** A down upstream makes the replica unready (503) instead of only being named. */
  readyRequiresUpstreams?: boolean;
  /** While it reports the event loop overloaded, /readyz answers 503 (/healthz stays 200: a lagging replica is alive). */
  loop?: Pick<EventLoopGuard, 'overloaded' | 'lagMs'>;
}

const downSchema = {
  type: 'array',
  description: 'MCP servers behind toolport that are down now; their tools answer upstream_unavailable',
  items: { type: 'object', properties: { source: { type: 'string' }, reason: { type: 'string' } }, required: ['source', 'reason'] },
};

export async function healthRoutes(app: FastifyInstance, { store, upstreams = () => [], readyRequiresUpstreams = false, loop }: HealthOptions): Promise<void> {
  // GET /sources: the same upstreams, each with its tools and the health its calls saw.
  await app.register(sourceRoutes, { upstreams });
  const status = { type: 'object', properties: { status: { type: 'string' }, store: { type: 'string' }, upstreams_down: downSchema } };
  app.get('/healthz', { schema: { summary: 'Liveness', operationId: 'healthz', tags: ['health'], security: [], response: { 200: status } } }, async () => ({
    status: 'ok',
  }));
  app.get(
    '/readyz',
    {
      schema: {
        summary: 'Readiness: the store is reachable (MCP servers that are down are named)',
        operationId: 'readyz',
        tags: ['health'],
        security: [],
        response: { 200: status, ...problemResponses(503) },
      },
    },
    async () => {
      if (loop?.overloaded === true) throw new NotReady(`the event loop lags ${Math.round(loop.lagMs)} ms, past MAX_EVENT_LOOP_DELAY_MS`);
      await store.ping();
      const down = upstreams()
        .filter((u) => !u.up)
        .map((u) => ({ source: u.source, reason: u.reason ?? 'down' }));
      if (down.length > 0 && readyRequiresUpstreams) {
        throw new NotReady(`MCP servers down: ${down.map((d) => `${d.source} (${d.reason})`).join('; ')}`);
      }
      return { status: 'ready', store: store.kind, ...(down.length > 0 && { upstreams_down: down }) };
    },
  );
}
