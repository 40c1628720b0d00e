/**
 * MCP authorization end to end (docs/identity.md): a real OpenID provider (oidc-provider, JWT access tokens
 * for the resource PUBLIC_URL/mcp, PKCE, refresh tokens, 60 s access tokens) and the official MCP SDK
 * v1 client with its OAuth client provider: 401 → protected resource metadata → authorization
 * server metadata → authorization code + PKCE (the login and consent completed over HTTP) → token
 * → tools/list and tools/call against toolport.
 */
import { createServer } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { FastifyInstance } from 'fastify';
import { decodeJwt } from 'jose';
import Provider from 'oidc-provider';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const REDIRECT = 'http://127.0.0.1:1/callback';

/** Follows the authorization URL as a browser would: the dev login and consent forms, cookies kept, until the redirect to the client. */
async function authorizeAs(login: string, start: URL): Promise<string> {
  const cookies = new Map<string, string>();
  const remember = (response: Response) => {
    for (const line of response.headers.getSetCookie()) {
      const pair = line.split(';')[0]!;
      const at = pair.indexOf('=');
      cookies.set(pair.slice(0, at), pair.slice(at + 1));
    }
  };
  const cookie = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  let url = start.href;
  let body: URLSearchParams | null = null;
  for (let hop = 0; hop < 20; hop++) {
    if (url.startsWith(REDIRECT)) {
      const code = new URL(url).searchParams.get('code');
      if (code === null) throw new Error(`the provider redirected without a code: ${url}`);
      return code;
    }
    const response = await fetch(url, {
      method: body ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: cookie(), ...(body && { 'content-type': 'application/x-www-form-urlencoded' }) },
      ...(body && { body }),
    });
    remember(response);
    body = null;
    const location = response.headers.get('location');
    if (location !== null) {
      url = new URL(location, url).href;
      continue;
    }
    const html = await response.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (action === undefined) throw new Error(`no form on ${url}: ${html.slice(0, 300)}`);
    const fields = new URLSearchParams();
    for (const [input] of html.matchAll(/<input[^>]*>/g)) {
      const name = / name="([^"]+)"/.exec(input)?.[1];
      if (name !== undefined) fields.set(name, / value="([^"]*)"/.exec(input)?.[1] ?? '');
    }
    if (fields.has('login')) fields.set('login', login);
    if (fields.has('password')) fields.set('password', 'any');
    url = new URL(action.replace(/&amp;/g, '&'), url).href;
    body = fields;
  }
  throw new Error('too many hops');
}

class TestOAuthProvider implements OAuthClientProvider {
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | null = null;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      redirect_uris: [REDIRECT],
      client_name: 'test',
      scope: 'openid tools',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation(): OAuthClientInformationMixed {
    return { client_id: 'mcp-test' };
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

describe('MCP authorization with a real OpenID provider and the official SDK client', () => {
  let idp: Server;
  let app: FastifyInstance;
  let url: string;

  beforeAll(async () => {
    const [idpPort, port] = [await freePort(), await freePort()];
    const issuer = `http://127.0.0.1:${idpPort}`;
    url = `http://127.0.0.1:${port}`;
    const resource = `${url}/mcp`;
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'mcp-test',
          token_endpoint_auth_method: 'none',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
        },
      ],
      features: {
        devInteractions: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx: unknown, indicator: string) => {
            if (indicator !== resource) throw new Error(`unknown resource ${indicator}`);
            return { scope: 'tools', audience: resource, accessTokenTTL: 60, accessTokenFormat: 'jwt' };
          },
        },
      },
      issueRefreshToken: () => true,
      cookies: { keys: ['test-cookie-key'] },
      ttl: { Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60, RefreshToken: 600, AccessToken: 60, IdToken: 60 },
      scopes: ['openid', 'offline_access', 'tools'],
      findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    } as never) as unknown as { listen(port: number): Server };
    idp = provider.listen(idpPort);
    app = await makeApp('memory', { env: { AUTH_ISSUER: issuer, PUBLIC_URL: url } });
    await app.listen({ host: '127.0.0.1', port });
  });
  afterAll(async () => {
    await app.close();
    await new Promise((resolve) => idp.close(resolve));
  });

  it('completes discovery, authorization code + PKCE and the token exchange, then lists and calls tools as the user', async () => {
    const oauth = new TestOAuthProvider();
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: oauth });
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await expect(client.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(oauth.authorizationUrl).not.toBeNull();
    expect(oauth.authorizationUrl!.searchParams.get('resource')).toBe(`${url}/mcp`);
    expect(oauth.authorizationUrl!.searchParams.get('code_challenge_method')).toBe('S256');
    const code = await authorizeAs('alice', oauth.authorizationUrl!);
    await transport.finishAuth(code);
    expect(oauth.saved?.access_token).toMatch(/^ey/);
    expect(oauth.saved?.refresh_token).toBeTruthy();
    // A JWT access token bound to this resource (RFC 8707), with a short life.
    const claims = decodeJwt(oauth.saved!.access_token);
    expect(claims).toMatchObject({ aud: `${url}/mcp`, sub: 'alice', scope: 'tools' });
    expect(claims.exp! - claims.iat!).toBe(60);
    const signedIn = new Client({ name: 'oauth-test', version: '1.0.0' });
    await signedIn.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: oauth }));
    const tools = await signedIn.listTools();
    expect(tools.tools.map((t) => t.name)).toContain('planning_setup_plan');
    const result = await signedIn.callTool({ name: 'planning_setup_plan', arguments: { objective: 'signed in' } });
    expect(result.isError).toBe(false);
    await signedIn.close();
  });
});
