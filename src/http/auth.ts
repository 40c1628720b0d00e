/**
 * Callers (docs/operations.md, docs/identity.md): with API keys or AUTH_ISSUER configured every route but /healthz, /readyz,
 * the pages and the protected resource metadata needs `Authorization: Bearer <key or token>`. A
 * bearer that is a JWT is verified against the issuer (src/callers/tokens.ts) and becomes a user whose
 * access rules say what it may do; any other bearer is an API key. Admin routes (`config: { admin:
 * true }`) need an admin caller; callers with `rate_per_min` are limited per minute, counted in
 * Redis when there is one (all replicas).
 */
import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiKeys, type Caller } from '../callers/keys.ts';
import { looksLikeJwt, type TokenVerifier } from '../callers/tokens.ts';
import { Forbidden, InsufficientScope, RateLimited, TokenRefused, Unauthorized } from '../errors.ts';
import { LazyChildLogger, type ParentLogger } from '../lazy-logger.ts';
import type { RateCounter } from '../store/index.ts';

const OPEN_ROUTES = new Set(['/healthz', '/readyz', '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']);
/**
 * Pages and what they load hold no data (docs/operations.md): Swagger UI, the console and their assets answer without a key,
 * and the OpenAPI document without a key leaves out the per-tool operations. A key that is sent is
 * still checked, and names the caller whose tools the document lists.
 */
export function isKeyOptional(url: string): boolean {
  // A connect link (docs/credentials.md) is opened in a browser: the link itself is bound to its user.
  return (
    url === '/openapi.json' ||
    url === '/docs' ||
    url.startsWith('/docs/') ||
    url === '/console' ||
    url.startsWith('/console/') ||
    url.startsWith('/connections/')
  );
}
const BEARER = /^Bearer +([^\s]+) *$/i;

export interface AuthOptions {
  /** The keys file; null = no API keys (users only, when `tokens` is set). */
  keys: ApiKeys | null;
  /** AUTH_ISSUER's verifier; null = API keys only. */
  tokens: TokenVerifier | null;
  /** PUBLIC_URL, when set: 401 answers name the protected resource metadata there (RFC 9728). */
  publicUrl: string | null;
  /** The store's shared counter; null: each process counts for itself. */
  rateCounter: RateCounter | null;
}

/** The protected resource metadata of a route: /mcp's own, the service's for the rest. */
export function resourceMetadataUrl(publicUrl: string, url: string): string {
  return `${publicUrl}/.well-known/oauth-protected-resource${url.startsWith('/mcp') ? '/mcp' : ''}`;
}

/** RFC 6750 §3 `WWW-Authenticate` value; `error` only when a token was sent, `scope` for a step-up. */
export function bearerChallenge(
  request: FastifyRequest,
  publicUrl: string | null,
  error?: { code: string; description: string; scope?: string },
  scopes = '',
): string {
  const params = ['realm="toolport"'];
  if (publicUrl !== null) params.push(`resource_metadata="${resourceMetadataUrl(publicUrl, request.routeOptions.url ?? '')}"`);
  // MCP authorization (2025-11-25): a 401 names the scopes to ask for, the access rules' own.
  if (error === undefined && scopes !== '') params.push(`scope="${scopes}"`);
  if (error !== undefined) {
    params.push(`error="${error.code}"`, `error_description="${error.description.replace(/["\\]/g, '')}"`);
    if (error.scope !== undefined) params.push(`scope="${error.scope}"`);
  }
  return `Bearer ${params.join(', ')}`;
}

const ACCESS = 'send an API key or an access token as Authorization: Bearer <key or token>';

async function authenticate(keys: ApiKeys, tokens: TokenVerifier | null, request: FastifyRequest): Promise<Caller> {
  const header = request.headers.authorization;
  const secret = typeof header === 'string' ? BEARER.exec(header)?.[1] : undefined;
  if (secret === undefined) throw new Unauthorized(tokens === null ? 'send the API key as Authorization: Bearer <key>' : ACCESS);
  const caller = keys.authenticate(secret);
  if (caller !== null) return caller;
  if (tokens === null || !looksLikeJwt(secret))
    throw new Unauthorized(tokens === null ? 'the API key is not valid' : 'the bearer is neither a known API key nor a JWT');
  return keys.access.callerFor(await tokens.verify(secret));
}

/**
 * A tool call the caller sees but whose rule needs a scope its token lacks: 403 insufficient_scope
 * naming the scope (RFC 6750 §3.1), so an OAuth client can ask the user for it and retry.
 */
function requireScopes(request: FastifyRequest, reply: FastifyReply, tools: readonly string[], publicUrl: string | null): void {
  const caller = request.caller;
  if (caller === null || caller.user === null) return;
  for (const tool of tools) {
    const scope = caller.missingScope(tool);
    if (scope === null) continue;
    const description = `calling ${tool} needs the scope ${scope}`;
    reply.header('www-authenticate', bearerChallenge(request, publicUrl, { code: 'insufficient_scope', description, scope }));
    throw new InsufficientScope(description, scope);
  }
}

/** The store's counter as @fastify/rate-limit's store. Routes set no limits of their own: one count per caller. */
function rateLimitStore(counter: RateCounter): FastifyRateLimitStoreCtor {
  return class CounterStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
      counter.incr(key, timeWindow).then(
        (count) => callback(null, count),
        (err: unknown) => callback(err instanceof Error ? err : new Error(String(err))),
      );
    }
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

export const authentication = fp(
  async (app: FastifyInstance, { keys: keysFile, tokens, publicUrl, rateCounter }: AuthOptions) => {
    app.decorateRequest('caller', null);
    app.decorate('requireScopes', (request: FastifyRequest, reply: FastifyReply, tools: readonly string[]) => requireScopes(request, reply, tools, publicUrl));
    if (keysFile === null && tokens === null) return;
    const keys = keysFile ?? ApiKeys.none();
    const challengeScopes = tokens === null ? '' : keys.access.scopes().join(' ');

    app.addHook('onRequest', async (request, reply) => {
      const url = request.routeOptions.url ?? '';
      if (OPEN_ROUTES.has(url)) return;
      if (request.headers.authorization === undefined && isKeyOptional(url)) return;
      try {
        request.caller = await authenticate(keys, tokens, request);
      } catch (err) {
        if (err instanceof TokenRefused) {
          // The log says why (an unknown kid, an outage of the provider, an audience…); the client gets the same words.
          request.log.info({ reason: err.message }, 'bearer token refused');
          reply.header('www-authenticate', bearerChallenge(request, publicUrl, { code: 'invalid_token', description: err.message }));
          throw new Unauthorized(err.message);
        }
        reply.header('www-authenticate', bearerChallenge(request, publicUrl, undefined, challengeScopes));
        throw err;
      }
      request.log = new LazyChildLogger(request.log as unknown as ParentLogger, { caller: request.caller.id }, {}) as unknown as FastifyBaseLogger;
      if (request.routeOptions.config.admin === true && !request.caller.admin) {
        throw new Forbidden(
          request.caller.user === null
            ? `API key "${request.caller.id}" is not an admin key`
            : `user "${request.caller.user.id}" is not an admin (no access rule makes them one)`,
        );
      }
    });

    await app.register(rateLimit, {
      global: true,
      timeWindow: 60_000,
      max: (request) => request.caller?.ratePerMin ?? 0,
      allowList: (request) => request.caller?.ratePerMin == null,
      keyGenerator: (request) => request.caller?.id ?? '',
      ...(rateCounter !== null && { store: rateLimitStore(rateCounter) }),
      // With Redis down, calls that need no store still run; the store-backed ones answer 503 anyway.
      skipOnError: true,
      errorResponseBuilder: (request, context) =>
        new RateLimited(
          `${request.caller?.user ? 'user' : 'API key'} "${request.caller?.id}" may make ${context.max} requests a minute; retry in ${context.after}`,
        ),
    });
  },
  { name: 'toolport-auth' },
);

declare module 'fastify' {
  interface FastifyRequest {
    /** The API key's or verified user's caller, or null when the service is open (no API_KEYS_FILE nor AUTH_ISSUER). */
    caller: Caller | null;
  }
  interface FastifyInstance {
    /**
     * Refuses a request whose user sees one of these tools but lacks the scope a rule needs to call it:
     * 403 insufficient_scope with `WWW-Authenticate` naming the scope (a no-op for API keys).
     */
    requireScopes(request: FastifyRequest, reply: FastifyReply, tools: readonly string[]): void;
  }
  interface FastifyContextConfig {
    /** Only admin keys may call this route. */
    admin?: boolean;
  }
}
