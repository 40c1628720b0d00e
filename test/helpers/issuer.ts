/**
 * A small OpenID Connect issuer on a free port: discovery and JWKS over HTTP, tokens signed with
 * real keys (RS256, ES256, EdDSA). Tests rotate its keys, take its JWKS down, and forge bad tokens.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface SigningKey {
  kid: string;
  alg: 'RS256' | 'ES256' | 'EdDSA';
  privateKey: CryptoKey;
  jwk: JWK;
}

export async function signingKey(alg: SigningKey['alg'], kid: string): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

export interface TestIssuer {
  issuer: string;
  /** The keys the JWKS publishes (tests add and remove). */
  published: SigningKey[];
  /** While true the JWKS answers 503. */
  down: boolean;
  /** How many times the JWKS was fetched. */
  jwksFetches: number;
  sign(claims: JWTPayload, options?: { key?: SigningKey; expiresIn?: string | number; alg?: string }): Promise<string>;
  close(): Promise<void>;
}

export async function startIssuer(): Promise<TestIssuer> {
  let issuer = '';
  const state: TestIssuer = {
    issuer: '',
    published: [await signingKey('RS256', 'rsa-1'), await signingKey('ES256', 'ec-1'), await signingKey('EdDSA', 'ed-1')],
    down: false,
    jwksFetches: 0,
    async sign(claims, options = {}) {
      const key = options.key ?? state.published[0]!;
      const jwt = new SignJWT(claims)
        .setProtectedHeader({ alg: options.alg ?? key.alg, kid: key.kid, typ: 'at+jwt' })
        .setIssuer(issuer)
        .setIssuedAt();
      if (claims.exp === undefined) jwt.setExpirationTime(options.expiresIn ?? '5m');
      return jwt.sign(key.privateKey);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((request, response) => {
    if (request.url === '/.well-known/openid-configuration') {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/jwks`, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token` }));
    } else if (request.url === '/jwks') {
      state.jwksFetches++;
      if (state.down) {
        response.statusCode = 503;
        response.end();
        return;
      }
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify({ keys: state.published.map((k) => k.jwk) }));
    } else {
      response.statusCode = 404;
      response.end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.issuer = issuer;
  return state;
}
