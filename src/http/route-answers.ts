/**
 * The answers every route can give besides its own (docs/operations.md: the document describes every answer),
 * added to each route's schema as it is registered, so routes added anywhere get them: 401 and 429
 * unless the route is open (`security: []`), 403 for admin routes, 400/413/415 where a body or
 * parameters are read, 503 everywhere (store unreachable, or shutting down).
 */
import type { FastifyInstance, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { problemResponse } from '../schemas.ts';

/** Fastify reads a body for these methods (and ignores one on GET and HEAD). */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

interface RouteSchema {
  hide?: boolean;
  security?: unknown[];
  params?: unknown;
  querystring?: unknown;
  headers?: unknown;
  response?: Record<string | number, unknown>;
}

/**
 * A path parameter is a non-empty segment, and never "." or "..": every HTTP client resolves those
 * (also as %2E) before sending, whatever the parameter's pattern allows.
 */
function asPathSegments(params: unknown): void {
  const properties = (params as { properties?: Record<string, Record<string, unknown>> } | undefined)?.properties;
  for (const property of Object.values(properties ?? {})) {
    property.minLength ??= 1;
    property.not ??= { enum: ['.', '..'] };
  }
}

export function documentAnswers(route: Pick<RouteOptions, 'method' | 'schema' | 'config'>): void {
  const schema = route.schema as RouteSchema | undefined;
  if (schema === undefined || schema.hide === true) return;
  asPathSegments(schema.params);
  const responses = (schema.response ??= {});
  const add = (status: number, description: string) => {
    if (!(status in responses)) responses[status] = problemResponse(description);
  };
  const methods = (Array.isArray(route.method) ? route.method : [route.method]).map((m) => m.toUpperCase());
  const open = Array.isArray(schema.security) && schema.security.length === 0;
  const readsBody = methods.some((m) => BODY_METHODS.has(m));
  if (readsBody || schema.params !== undefined || schema.querystring !== undefined || schema.headers !== undefined) {
    add(400, 'a parameter, header or body that is not acceptable (invalid-request, invalid-query, invalid-header, invalid-body)');
  }
  if (!open)
    add(
      401,
      'API keys or AUTH_ISSUER are configured and no valid key or access token was sent (WWW-Authenticate: Bearer, with resource_metadata when PUBLIC_URL is set)',
    );
  if ((route.config as { admin?: boolean } | undefined)?.admin === true) add(403, 'the caller is not an admin');
  if (readsBody) {
    add(413, 'the body is larger than MAX_BODY_BYTES');
    add(415, 'a body that is not application/json');
  }
  if (!open) add(429, "the API key's rate_per_min is used up (Retry-After, in seconds)");
  const startsCalls = route.config?.startsCalls === true;
  add(
    503,
    startsCalls
      ? 'the store is unreachable, the service is shutting down, or its event loop lags past MAX_EVENT_LOOP_DELAY_MS (overloaded) (Retry-After)'
      : 'the store is unreachable, or the service is shutting down (Retry-After)',
  );
}

export const routeAnswers = fp(
  async (app: FastifyInstance) => {
    app.addHook('onRoute', (route) => documentAnswers(route));
  },
  { name: 'toolport-route-answers' },
);
