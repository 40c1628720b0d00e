/**
 * JWT access tokens of one OpenID Connect issuer (AUTH_ISSUER): its discovery document names the
 * JWKS, which jose fetches and caches (an unknown `kid` refetches it at most every 30 s, so keys
 * rotate without a restart). When the JWKS cannot be fetched, the keys last fetched keep verifying.
 * Only asymmetric algorithms are accepted: `none` and HMAC (a shared secret anyone holding the
 * JWKS-less configuration could forge with) are refused.
 */
import { createLocalJWKSet, createRemoteJWKSet, errors, jwtVerify, type JSONWebKeySet, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { Logger } from 'pino';
import { scopesOf, stringsOf, type VerifiedUser } from './access.ts';
import { TokenRefused } from '../errors.ts';
import { VerifiedTokens } from './token-cache.ts';
import { deepFreeze } from '../json.ts';

export const ALGORITHMS = ['RS256', 'ES256', 'EdDSA', 'Ed25519'];
const LEEWAY_S = 60;
const FETCH_TIMEOUT_MS = 5000;
/** After a failed fetch of the discovery document or the JWKS, how long before trying again. */
const RETRY_MS = 30_000;

export interface TokenVerifierOptions {
  issuer: string;
  /** The token's `aud` must contain one of these. */
  audiences: readonly string[];
  /** The claim holding the user's groups; a dotted path reaches into objects (Keycloak's `realm_access.roles`). */
  groupsClaim: string;
  log: Logger;
}

/** A bearer token that is three base64url parts is taken for a JWT; any other is an API key. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token);
}

function claimAt(payload: JWTPayload, path: string): unknown {
  if (path in payload) return payload[path];
  let value: unknown = payload;
  for (const part of path.split('.')) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value;
}

/** The issuer's metadata: OpenID Connect discovery, or else RFC 8414 authorization server metadata. */
async function discover(issuer: string): Promise<URL> {
  const base = issuer.replace(/\/+$/, '');
  const url = new URL(issuer);
  const candidates = [`${base}/.well-known/openid-configuration`, `${url.origin}/.well-known/oauth-authorization-server${url.pathname.replace(/\/+$/, '')}`];
  let last = '';
  for (const candidate of candidates) {
    try {
      const response = await fetch(candidate, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
      if (!response.ok) {
        last = `${candidate} answered ${response.status}`;
        continue;
      }
      const metadata = (await response.json()) as { issuer?: unknown; jwks_uri?: unknown };
      if (metadata.issuer !== issuer) throw new Error(`${candidate} names issuer ${JSON.stringify(metadata.issuer)}, not ${issuer}`);
      if (typeof metadata.jwks_uri !== 'string') throw new Error(`${candidate} has no jwks_uri`);
      return new URL(metadata.jwks_uri);
    } catch (err) {
      last = `${candidate}: ${(err as Error).message}`;
    }
  }
  throw new Error(`the issuer's metadata cannot be read (${last})`);
}

export class TokenVerifier {
  readonly #o: TokenVerifierOptions;
  #remote: Promise<ReturnType<typeof createRemoteJWKSet>> | null = null;
  #discoveryFailedAt = 0;
  /** The last key set fetched, and a local verifier over it for when the JWKS cannot be fetched. */
  #known: { jwks: JSONWebKeySet; local: JWTVerifyGetKey } | null = null;
  #unreachableUntil = 0;
  readonly #verified = new VerifiedTokens();

  constructor(options: TokenVerifierOptions) {
    this.#o = options;
  }

  #jwks(): Promise<ReturnType<typeof createRemoteJWKSet>> {
    if (this.#remote === null) {
      if (Date.now() - this.#discoveryFailedAt < RETRY_MS) return Promise.reject(new TokenRefused('the identity provider cannot be reached to verify tokens'));
      this.#remote = discover(this.#o.issuer).then(
        (uri) => createRemoteJWKSet(uri, { timeoutDuration: FETCH_TIMEOUT_MS }),
        (err: unknown) => {
          this.#remote = null;
          this.#discoveryFailedAt = Date.now();
          this.#o.log.warn({ err, issuer: this.#o.issuer }, 'AUTH_ISSUER: discovery failed; tokens are refused until it succeeds');
          throw new TokenRefused('the identity provider cannot be reached to verify tokens');
        },
      );
    }
    return this.#remote;
  }

  /** The key for a token's header: from the JWKS, or from the keys last fetched while it cannot be reached. */
  readonly #key: JWTVerifyGetKey = async (header, token) => {
    const remote = await this.#jwks();
    if (this.#known !== null && Date.now() < this.#unreachableUntil) return this.#known.local(header, token);
    try {
      const key = await remote(header, token);
      const jwks = remote.jwks();
      if (jwks !== undefined && jwks !== this.#known?.jwks) this.#known = { jwks, local: createLocalJWKSet(jwks) };
      return key;
    } catch (err) {
      if (!(err instanceof errors.JWKSTimeout || err instanceof TypeError || (err instanceof errors.JOSEError && err.code === 'ERR_JOSE_GENERIC'))) throw err;
      this.#unreachableUntil = Date.now() + RETRY_MS;
      this.#o.log.warn({ err, issuer: this.#o.issuer }, 'the JWKS cannot be fetched: verifying with the keys fetched before');
      if (this.#known === null) throw new TokenRefused('the identity provider cannot be reached to verify tokens');
      return this.#known.local(header, token);
    }
  };

  /** The verified user, or TokenRefused saying why. A token verified before answers from memory until it expires (60 s at most). */
  async verify(token: string): Promise<VerifiedUser> {
    const key = VerifiedTokens.keyOf(token);
    const known = this.#verified.get(key);
    if (known !== null) return known;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key, {
        issuer: this.#o.issuer,
        audience: [...this.#o.audiences],
        algorithms: ALGORITHMS,
        clockTolerance: LEEWAY_S,
        requiredClaims: ['sub', 'exp'],
      }));
    } catch (err) {
      throw err instanceof TokenRefused ? err : new TokenRefused(reasonOf(err));
    }
    const user: VerifiedUser = {
      sub: payload.sub!,
      groups: stringsOf(claimAt(payload, this.#o.groupsClaim)),
      scopes: scopesOf(payload),
      claims: deepFreeze(payload) as Readonly<Record<string, unknown>>, // one object for every call with this token: nothing may change it
    };
    this.#verified.set(key, user, payload.exp!);
    return user;
  }
}

function reasonOf(err: unknown): string {
  if (err instanceof errors.JWTExpired) return 'the token has expired';
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return 'the token is not meant for this service (aud)';
    if (err.claim === 'iss') return 'the token is from another issuer (iss)';
    if (err.claim === 'nbf') return 'the token is not valid yet (nbf)';
    return `the token's "${err.claim}" claim is not acceptable (${err.reason})`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return 'the token is signed with an algorithm this service refuses';
  if (err instanceof errors.JWKSNoMatchingKey) return 'the token is signed with a key the issuer does not publish (unknown kid)';
  if (err instanceof errors.JWKSMultipleMatchingKeys) return 'the token names no single key of the issuer';
  if (err instanceof errors.JWSSignatureVerificationFailed) return 'the token signature is not valid';
  if (err instanceof errors.JOSENotSupported) return 'the token uses a form of JWT this service does not support';
  if (err instanceof errors.JWTInvalid || err instanceof errors.JWSInvalid) return 'the token is not a well-formed JWT';
  return 'the token cannot be verified';
}
