/**
 * Callers (SPEC §8): with API keys configured every route but /healthz, /readyz and the pages needs
 * `Authorization: Bearer <key>`; admin routes (`config: { admin: true }`) need an admin key; keys
 * with `rate_per_min` are limited per minute, counted in Redis when there is one (all replicas).
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Cluster, Redis } from 'ioredis';
import type { ApiKeys, Caller } from '../callers/keys.ts';
import { Forbidden, RateLimited, Unauthorized } from '../errors.ts';
import { LazyChildLogger, type ParentLogger } from '../lazy-logger.ts';

const OPEN_ROUTES = new Set(['/healthz', '/readyz']);
/**
 * Pages and what they load hold no data (SPEC §8): Swagger UI, the console and their assets answer without a key,
 * and the OpenAPI document without a key leaves out the per-tool operations. A key that is sent is
 * still checked, and names the caller whose tools the document lists.
 */
export function isKeyOptional(url: string): boolean {
  return url === '/openapi.json' || url === '/docs' || url.startsWith('/docs/') || url === '/console' || url.startsWith('/console/');
}
const BEARER = /^Bearer +([^\s]+) *$/i;

export interface AuthOptions {
  keys: ApiKeys | null;
  redis: Redis | Cluster | null;
  keyPrefix: string;
}

function authenticate(keys: ApiKeys, request: FastifyRequest): Caller {
  const header = request.headers.authorization;
  const secret = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
  if (secret === undefined) throw new Unauthorized('send the API key as Authorization: Bearer <key>');
  const caller = keys.authenticate(secret);
  if (caller === null) throw new Unauthorized('the API key is not valid');
  return caller;
}

export const authPlugin = fp(
  async (app: FastifyInstance, { keys, redis, keyPrefix }: AuthOptions) => {
    app.decorateRequest('caller', null);
    if (keys === null) return;

    app.addHook('onRequest', async (request, reply) => {
      const url = request.routeOptions.url ?? '';
      if (OPEN_ROUTES.has(url)) return;
      if (request.headers.authorization === undefined && isKeyOptional(url)) return;
      try {
        request.caller = authenticate(keys, request);
      } catch (err) {
        reply.header('www-authenticate', 'Bearer realm="toolport"');
        throw err;
      }
      request.log = new LazyChildLogger(request.log as unknown as ParentLogger, { caller: request.caller.id }, {}) as unknown as FastifyBaseLogger;
      if (request.routeOptions.config.admin === true && !request.caller.admin) {
        throw new Forbidden(`API key "${request.caller.id}" is not an admin key`);
      }
    });

    await app.register(rateLimit, {
      global: true,
      timeWindow: 60_000,
      max: (request) => request.caller?.ratePerMin ?? 0,
      allowList: (request) => request.caller?.ratePerMin == null,
      keyGenerator: (request) => request.caller?.id ?? '',
      ...(redis !== null && { redis, nameSpace: `${keyPrefix}ratelimit:` }),
      // With Redis down, calls that need no store still run; the store-backed ones answer 503 anyway.
      skipOnError: true,
      errorResponseBuilder: (request, context) =>
        new RateLimited(`API key "${request.caller?.id}" may make ${context.max} requests a minute; retry in ${context.after}`),
    });
  },
  { name: 'toolport-auth' },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key's caller, or null when the service is open (no API_KEYS_FILE). */
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    /** Only admin keys may call this route. */
    admin?: boolean;
  }
}
