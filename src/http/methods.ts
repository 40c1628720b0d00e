/**
 * 405 with `Allow` for a known path called with another method (docs/operations.md), for every route however it
 * was added: an onRoute hook collects each route's path pattern and methods. Decided in onRequest, so
 * an unknown route is answered before Fastify looks at its body (no parser or Content-Type message of
 * Fastify's own reaches the client).
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { MethodNotAllowed, NotFound } from '../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route only answers 405 itself: its method is left out of the Allow header. */
    refusesMethod?: boolean;
  }
}

interface KnownPath {
  pattern: RegExp;
  methods: Set<string>;
}

/** `/tools/:name/invoke` → /^\/tools\/[^/]+\/invoke\/?$/; `*` matches the rest of the path. */
function patternOf(url: string): RegExp {
  const source = url
    .split('/')
    .map((segment) => (segment.startsWith(':') ? '[^/]+' : segment === '*' ? '.*' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\*$/, '.*')))
    .join('/');
  return new RegExp(`^${source}/?$`);
}

export const methodAnswers = fp(
  async (app: FastifyInstance) => {
    const known = new Map<string, KnownPath>();
    app.addHook('onRoute', (route) => {
      // A route that exists only to answer 405 itself (GET /mcp) does not make its method allowed.
      if (route.config?.refusesMethod === true) return;
      const methods = Array.isArray(route.method) ? route.method : [route.method];
      let entry = known.get(route.url);
      if (entry === undefined) {
        entry = { pattern: patternOf(route.url), methods: new Set() };
        known.set(route.url, entry);
      }
      for (const method of methods) entry.methods.add(method.toUpperCase());
      if (entry.methods.has('GET')) entry.methods.add('HEAD');
    });

    app.addHook('onRequest', (request, reply, done) => {
      if (!request.is404) return done();
      const path = request.url.split('?')[0]!;
      const allowed = new Set<string>();
      for (const { pattern, methods } of known.values()) if (pattern.test(path)) for (const method of methods) allowed.add(method);
      if (allowed.size === 0) return done(new NotFound(`no route ${request.method} ${path}`));
      const allow = [...allowed].sort().join(', ');
      reply.header('allow', allow);
      done(new MethodNotAllowed(`${path} does not take ${request.method.slice(0, 32)}: it takes ${allow}`));
    });
  },
  { name: 'toolport-methods' },
);
