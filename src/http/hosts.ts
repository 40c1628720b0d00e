/**
 * Hosts and origins (docs/operations.md#hosts-and-origins). Every request's `Host` must name this
 * service — a page that rebinds its DNS name to 127.0.0.1 sends its own name and reaches nothing —
 * and a browser page of another origin may not call /mcp nor any route that changes state. What is
 * allowed is worked out once at start; per request, one Map lookup of the Host header as sent.
 */
import { isIP } from 'node:net';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { HostNotAllowed, OriginNotAllowed } from '../errors.ts';

type HostSettings = Pick<Config, 'host' | 'publicUrl' | 'allowedHosts' | 'corsOrigins'>;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];
/** Host headers seen, with the decision: bounded, as a client may send any number of names. */
const DECISIONS_KEPT = 1024;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

function isLoopbackBind(host: string): boolean {
  const name = host.toLowerCase();
  return name === 'localhost' || name === '::1' || name.startsWith('127.');
}

/** The host name of a Host header (or of an origin's authority): lower case, without port or brackets. */
export function hostName(authority: string): string {
  const lower = authority.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(1, lower.indexOf(']') === -1 ? undefined : lower.indexOf(']'));
  const colon = lower.indexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

export class HostRules {
  /** Null: every Host is answered. */
  readonly #names: ReadonlySet<string> | null;
  readonly #decisions = new Map<string, boolean>();
  readonly #origins: ReadonlySet<string>;
  readonly #ownOrigin: string | null;

  constructor(settings: HostSettings) {
    const listed = settings.allowedHosts ?? [];
    // A service bound to a network address with no ALLOWED_HOSTS answers every name it is reached by (a Kubernetes
    // Service, a compose name): only a loopback bind knows its names without being told.
    const open = listed.includes('*') || (settings.allowedHosts === null && !isLoopbackBind(settings.host));
    const publicHost = settings.publicUrl === null ? [] : [hostName(new URL(settings.publicUrl).host)];
    this.#names = open ? null : new Set([...LOOPBACK_NAMES, ...publicHost, ...listed.map(hostName)]);
    this.#origins = new Set(settings.corsOrigins);
    this.#ownOrigin = settings.publicUrl === null ? null : new URL(settings.publicUrl).origin;
  }

  /** Whether every Host is answered (a network bind without ALLOWED_HOSTS, or `*`). */
  get open(): boolean {
    return this.#names === null;
  }

  allowsHost(header: string | undefined): boolean {
    if (this.#names === null || header === undefined) return true;
    let allowed = this.#decisions.get(header);
    if (allowed === undefined) {
      const name = hostName(header);
      // An address is never a rebound name: a page can only send the name it was loaded from.
      allowed = this.#names.has(name) || isIP(name) !== 0;
      if (this.#decisions.size >= DECISIONS_KEPT) this.#decisions.clear();
      this.#decisions.set(header, allowed);
    }
    return allowed;
  }

  /** An origin is the service's own (the page was served by the Host it calls, or by PUBLIC_URL) or listed in CORS_ORIGINS. */
  allowsOrigin(origin: string, host: string | undefined): boolean {
    const lower = origin.toLowerCase();
    if (this.#origins.has(lower) || lower === this.#ownOrigin) return true;
    const scheme = lower.indexOf('://');
    return scheme !== -1 && host !== undefined && lower.slice(scheme + 3) === host.toLowerCase();
  }

  get corsOrigins(): string[] {
    return [...this.#origins];
  }
}

/** Whether a request's Origin is checked: every /mcp request, and every request that may change state. */
function originChecked(request: FastifyRequest): boolean {
  return !SAFE_METHODS.has(request.method) || request.url.startsWith('/mcp');
}

/** The checks as the first onRequest hook of every route, and CORS for the listed origins. */
export function guardHostsAndOrigins(app: FastifyInstance, settings: HostSettings, log: Logger): void {
  const rules = new HostRules(settings);
  if (rules.open && settings.allowedHosts === null) {
    log.warn({ host: settings.host }, 'bound to a network address without ALLOWED_HOSTS: every Host name is answered (docs/operations.md#hosts-and-origins)');
  }
  // Callback style: a promise per request would cost more than the check.
  app.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) => {
    const host = request.headers.host;
    if (!rules.allowsHost(host)) return done(new HostNotAllowed(`this service does not answer the Host "${host}": add it to ALLOWED_HOSTS`));
    const origin = request.headers.origin;
    if (origin !== undefined && originChecked(request) && !rules.allowsOrigin(origin, host)) {
      return done(new OriginNotAllowed(`a page of ${origin} may not call ${request.method} ${request.url.split('?')[0]}: add the origin to CORS_ORIGINS`));
    }
    done();
  });
  if (settings.corsOrigins.length > 0) {
    void app.register(cors, {
      origin: rules.corsOrigins,
      exposedHeaders: ['mcp-session-id', 'mcp-protocol-version', 'location', 'retry-after', 'etag', 'x-request-id', 'www-authenticate'],
      maxAge: 600,
    });
  }
}
