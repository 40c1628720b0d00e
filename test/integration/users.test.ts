/** Users (docs/identity.md): JWT access tokens of AUTH_ISSUER beside API keys, access rules, context.user, faults. */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { SignJWT, UnsecuredJWT } from 'jose';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { signingKey, startIssuer, type TestIssuer } from '../helpers/issuer.ts';

const PUBLIC_URL = 'https://toolport.example';
const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const KEY = `sk-svc-${randomUUID()}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const echo = { name: 'echo', arguments: { text: 'hi' } };

async function keysFile(content: unknown): Promise<string> {
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-access-')), 'keys.json');
  await writeFile(file, JSON.stringify(content));
  return file;
}

describe('users with JWT access tokens', () => {
  let issuer: TestIssuer;
  let app: FastifyInstance;
  const lines: string[] = [];
  const token = (claims: Record<string, unknown> = {}, options?: Parameters<TestIssuer['sign']>[1]) =>
    issuer.sign({ sub: 'alice', aud: `${PUBLIC_URL}/mcp`, groups: ['staff'], scope: 'openid', ...claims }, options);

  beforeAll(async () => {
    issuer = await startIssuer();
    const file = await keysFile({
      keys: [{ id: 'svc', key_sha256: sha(KEY), tools: ['echo'] }],
      access: [
        { tools: ['echo', 'whoami'] },
        { groups: ['staff'], tools: ['planning_*'] },
        { groups: ['staff'], scopes: ['counter:write'], tools: ['counter'] },
        { groups: ['ops'], tools: ['*'], admin: true, rate_per_min: 1000 },
      ],
    });
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    app = await makeApp('memory', {
      env: { API_KEYS_FILE: file, AUTH_ISSUER: issuer.issuer, PUBLIC_URL, LOG_LEVEL: 'info' },
      logger,
      register: (registry) =>
        registry.registerTool({
          name: 'whoami',
          description: 'Who the call is made for.',
          parameters: { type: 'object', properties: {} },
          handler: (_params, context) => ok({ caller: context.caller, user: context.user }, 'you'),
        }),
    });
  });
  afterAll(async () => {
    await app.close();
    await issuer.close();
  });

  it('verifies RS256, ES256 and EdDSA tokens and makes the caller user:<sub>, with context.user for handlers', async () => {
    for (const key of issuer.published) {
      const response = await post(app, { name: 'whoami', arguments: {} }, bearer(await token({ email: 'alice@example.com' }, { key })));
      expect(response.status, key.alg).toBe(200);
      expect(response.body.value).toMatchObject({
        caller: 'user:alice',
        user: { id: 'alice', groups: ['staff'], claims: { email: 'alice@example.com', sub: 'alice' } },
      });
    }
    expect((await get(app, '/caller', bearer(await token()))).body).toMatchObject({ id: 'user:alice', admin: false });
  });

  it('keeps API keys working beside tokens, with context.user null', async () => {
    expect((await post(app, echo, bearer(KEY))).body.success).toBe(true);
    expect((await get(app, '/caller', bearer(KEY))).body).toMatchObject({ id: 'svc' });
  });

  it('answers 401 with the reason, never a 500, for every bad token', async () => {
    const other = await signingKey('RS256', 'rsa-1'); // same kid, another key: a forged signature
    const hmac = await new SignJWT({ sub: 'alice', aud: `${PUBLIC_URL}/mcp` })
      .setProtectedHeader({ alg: 'HS256', kid: 'rsa-1' })
      .setIssuer(issuer.issuer)
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode('a'.repeat(32)));
    const none = new UnsecuredJWT({ sub: 'alice', aud: `${PUBLIC_URL}/mcp` }).setIssuer(issuer.issuer).setExpirationTime('5m').encode();
    const now = Math.floor(Date.now() / 1000);
    const cases: [string, string, RegExp][] = [
      ['expired', await token({ exp: now - 120 }), /expired/],
      ['not yet valid', await token({ nbf: now + 600 }), /not valid yet/],
      ['another audience', await token({ aud: 'https://elsewhere.example' }), /not meant for this service/],
      [
        'another issuer',
        await new SignJWT({ sub: 'alice', aud: PUBLIC_URL })
          .setProtectedHeader({ alg: 'RS256', kid: 'rsa-1' })
          .setIssuer('https://evil.example')
          .setExpirationTime('5m')
          .sign(issuer.published[0]!.privateKey),
        /another issuer/,
      ],
      ['a forged signature', await token({}, { key: other }), /signature is not valid/],
      ['HMAC', hmac, /algorithm this service refuses/],
      ['alg none', none, /algorithm this service refuses|not a well-formed/],
      ['malformed', 'aaa.bbb.ccc', /not a well-formed JWT/],
      ['no subject', await token({ sub: undefined }), /"sub" claim/],
    ];
    for (const [what, bad, reason] of cases) {
      const response = await post(app, echo, bearer(bad));
      expect(response.status, what).toBe(401);
      expect(response.body.detail, what).toMatch(reason);
      expect(response.headers['www-authenticate'], what).toContain(`resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource"`);
      expect(response.headers['www-authenticate'], what).toContain('error="invalid_token"');
    }
    // Within the 60 s leeway an expired token still passes.
    expect((await post(app, echo, bearer(await token({ exp: now - 30 })))).status).toBe(200);
    // The audience may be the service itself as well as its /mcp.
    expect((await post(app, echo, bearer(await token({ aud: [PUBLIC_URL, 'other'] })))).status).toBe(200);
  });

  it('grants the union of the rules matching the groups: unknown_tool outside them, admin from a rule', async () => {
    const staff = await token();
    expect((await post(app, { name: 'planning_setup_plan', arguments: { session_id: 's-alice', objective: 'o' } }, bearer(staff))).body.success).toBe(true);
    expect((await post(app, { name: 'slow', arguments: { ms: 1 } }, bearer(staff))).body).toMatchObject({ success: false, error: { code: 'unknown_tool' } });
    const listed = (await get(app, '/tools', bearer(staff))).body.tools.map((t: { name: string }) => t.name);
    expect(listed).toEqual(expect.arrayContaining(['echo', 'whoami', 'planning_read_plan', 'counter']));
    expect(listed).not.toContain('slow');
    // No group: only the rule that names none.
    const outsider = await token({ sub: 'bob', groups: [] });
    expect((await post(app, { name: 'planning_read_plan', arguments: {} }, bearer(outsider))).body.error.code).toBe('unknown_tool');
    expect((await get(app, '/ledger/effects/x', bearer(staff))).status).toBe(403);
    const ops = await token({ sub: 'carol', groups: ['ops'] });
    expect((await get(app, '/caller', bearer(ops))).body).toMatchObject({ id: 'user:carol', admin: true });
    expect((await post(app, { name: 'slow', arguments: { ms: 1 } }, bearer(ops))).body.success).toBe(true);
  });

  it("answers 403 insufficient_scope naming the scope when the rule's scope is missing, and runs with it", async () => {
    const response = await post(app, { name: 'counter', arguments: {} }, { ...bearer(await token()), 'x-session-id': 's-scope' });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ type: 'urn:toolport:problem:insufficient-scope', scope: 'counter:write' });
    expect(response.headers['www-authenticate']).toMatch(/error="insufficient_scope".*scope="counter:write"/);
    const named = await post(app, {}, bearer(await token()), '/tools/counter/invoke');
    expect(named.status).toBe(403);
    const stepped = await post(
      app,
      { name: 'counter', arguments: {} },
      { ...bearer(await token({ scope: 'openid counter:write' })), 'x-session-id': 's-scope' },
    );
    expect(stepped.body).toMatchObject({ success: true, value: { count: 1 } });
    // Entra ID names the scopes `scp`.
    expect(
      (await post(app, { name: 'counter', arguments: {} }, { ...bearer(await token({ scope: undefined, scp: 'counter:write' })), 'x-session-id': 's-scope' }))
        .body.value,
    ).toEqual({ count: 2 });
  });

  it('serves the protected resource metadata without a token', async () => {
    for (const url of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp']) {
      const metadata = await get(app, url);
      expect(metadata.status).toBe(200);
      expect(metadata.body).toEqual({
        resource: `${PUBLIC_URL}/mcp`,
        authorization_servers: [issuer.issuer],
        scopes_supported: ['counter:write'],
        bearer_methods_supported: ['header'],
        resource_name: 'toolport',
      });
    }
    const challenge = await post(app, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, {}, '/mcp');
    expect(challenge.status).toBe(401);
    expect(challenge.headers['www-authenticate']).toBe(
      `Bearer realm="toolport", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp", scope="counter:write"`,
    );
  });

  it('answers insufficient_scope on /mcp with WWW-Authenticate for a step-up', async () => {
    const headers = { ...bearer(await token()), accept: 'application/json, text/event-stream' };
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'counter', arguments: { session_id: 's-mcp' } } };
    const refused = await post(app, call, headers, '/mcp');
    expect(refused.status).toBe(403);
    expect(refused.headers['www-authenticate']).toBe(
      `Bearer realm="toolport", resource_metadata="${PUBLIC_URL}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", error_description="calling counter needs the scope counter:write", scope="counter:write"`,
    );
    const listed = await post(app, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, headers, '/mcp');
    expect(listed.body.result.tools.map((t: { name: string }) => t.name)).toContain('counter');
  });

  it('takes a rotated key without a restart, keeps verifying with cached keys while the JWKS is down, and logs why an unknown kid is refused', async () => {
    const before = await token();
    expect((await post(app, echo, bearer(before))).status).toBe(200);
    const rotated = await signingKey('ES256', `ec-${randomUUID()}`);
    issuer.published.push(rotated);
    // jose refetches the JWKS for an unknown kid at most every 30 s: move the clock past that.
    const now = Date.now();
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => now + 31_000);
    try {
      expect((await post(app, echo, bearer(await token({}, { key: rotated })))).status).toBe(200);
      issuer.down = true;
      clock.mockImplementation(() => now + 62_000 + 11 * 60_000); // past jose's 10 min cache age: it must refetch
      const fetches = issuer.jwksFetches;
      expect((await post(app, echo, bearer(await token({}, { key: rotated })))).status).toBe(200);
      expect(issuer.jwksFetches).toBeGreaterThan(fetches);
      const stranger = await signingKey('RS256', 'unknown-kid');
      const refused = await post(app, echo, bearer(await token({}, { key: stranger })));
      expect(refused.status).toBe(401);
      expect(refused.body.detail).toMatch(/unknown kid/);
      expect(lines.some((line) => line.includes('the JWKS cannot be fetched'))).toBe(true);
      expect(lines.some((line) => line.includes('bearer token refused') && line.includes('unknown kid'))).toBe(true);
    } finally {
      clock.mockRestore();
      issuer.down = false;
    }
  });

  it('never writes a token to the log', async () => {
    const secret = await token();
    await post(app, { name: 'nope', arguments: {} }, bearer(secret));
    await post(app, echo, bearer(`${secret}x`));
    expect(lines.join('\n')).not.toContain(secret.split('.')[2]);
  });
});

describe('users without a keys file', () => {
  it('lets every verified user call every tool, and still refuses calls without a token', async () => {
    const issuer = await startIssuer();
    const app = await makeApp('memory', { env: { AUTH_ISSUER: issuer.issuer, AUTH_AUDIENCE: 'api://toolport' } });
    try {
      expect((await post(app, echo)).status).toBe(401);
      const token = await issuer.sign({ sub: 'dave', aud: 'api://toolport' });
      expect((await post(app, { name: 'slow', arguments: { ms: 1 } }, bearer(token))).body.success).toBe(true);
      // AUTH_AUDIENCE replaces PUBLIC_URL as the audience.
      expect((await post(app, echo, bearer(await issuer.sign({ sub: 'dave', aud: 'https://toolport.example/mcp' })))).status).toBe(401);
    } finally {
      await app.close();
      await issuer.close();
    }
  });

  it('answers 401 while the issuer cannot be reached', async () => {
    const issuer = await startIssuer();
    const url = issuer.issuer;
    await issuer.close();
    const app = await makeApp('memory', { env: { AUTH_ISSUER: url, PUBLIC_URL } });
    try {
      const response = await post(app, echo, bearer('eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln'));
      expect(response.status).toBe(401);
      expect(response.body.detail).toMatch(/identity provider cannot be reached/);
    } finally {
      await app.close();
    }
  });
});
