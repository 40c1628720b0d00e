/**
 * The request's toolset (docs/toolsets.md): `/mcp/{toolset}`, `?toolset=` or `X-Toolset`. A toolset that
 * does not exist, or that the caller's key is not bound to, answers 404 on every route. Routes read
 * `request.toolset`, and `allowsOf(request)` (src/http/scope.ts): what the caller may call inside it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { InvalidHeader, NotFound } from '../errors.ts';
import type { Toolsets, ToolsetView } from '../toolsets/index.ts';

function requested(request: FastifyRequest): string | undefined {
  const fromPath = (request.params as { toolset?: unknown } | undefined)?.toolset;
  if (typeof fromPath === 'string') return fromPath;
  const fromQuery = (request.query as { toolset?: unknown } | undefined)?.toolset;
  if (typeof fromQuery === 'string') return fromQuery;
  const header = request.headers['x-toolset'];
  if (Array.isArray(header)) throw new InvalidHeader('X-Toolset must be sent once');
  return header;
}

export const toolsetHeader = fp(
  async (app: FastifyInstance, { toolsets }: { toolsets: Toolsets }) => {
    app.decorateRequest('toolset', null);
    // In onRequest, after the caller is known (the auth plugin's hook runs first): every route already
    // has hooks there, so requests pay for no preHandler phase.
    app.addHook('onRequest', (request, _reply, done) => {
      const name = requested(request);
      if (name === undefined) return done();
      const bound = request.caller?.toolsets ?? null;
      const forceSearch =
        (request.query as { discovery?: unknown } | undefined)?.discovery === 'search' &&
        typeof (request.params as { toolset?: unknown } | undefined)?.toolset === 'string';
      const view = bound === null || bound.includes(name) ? toolsets.view(name, forceSearch) : undefined;
      if (view === undefined) return done(new NotFound(`no toolset named "${name.slice(0, 64)}"`));
      request.toolset = view;
      done();
    });
  },
  { name: 'toolport-toolset' },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The toolset the request is restricted to, or null. */
    toolset: ToolsetView | null;
  }
}
