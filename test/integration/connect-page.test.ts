/**
 * A connect link's confirmation page: whatever a person's display name holds, the page shows it as
 * text (escaped), with nothing run and nothing loaded from elsewhere; the link stays unspent.
 */
import { randomBytes } from 'node:crypto';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretsCipher } from '../../src/credentials/cipher.ts';
import type { CredentialDefinition } from '../../src/credentials/definitions.ts';
import { Vault } from '../../src/credentials/vault.ts';
import { connectLinkRoutes } from '../../src/routes/connect-link.ts';
import { connectionRoutes } from '../../src/routes/connections.ts';
import { problemSchema } from '../../src/schemas.ts';
import { MemoryCredentials } from '../../src/store/memory/credentials.ts';

const PUBLIC_URL = 'http://toolport.test';

describe("a connect link's page", () => {
  let app: FastifyInstance;
  let vault: Vault;

  beforeAll(async () => {
    const definitions = new Map<string, CredentialDefinition>([['weather_key', { name: 'weather_key', kind: 'secret' }]]);
    vault = new Vault({
      definitions,
      store: new MemoryCredentials(),
      cipher: new SecretsCipher(randomBytes(32)),
      issuer: 'test',
      publicUrl: PUBLIC_URL,
      log: pino({ level: 'silent' }),
    });
    app = Fastify();
    app.addSchema(problemSchema);
    app.decorateRequest('caller', null);
    await app.register(connectLinkRoutes, { vault, publicUrl: PUBLIC_URL });
    await app.register(connectionRoutes, { vault, publicUrl: PUBLIC_URL });
    await app.ready();
  });
  afterAll(async () => {
    await app?.close();
  });

  it('shows a display name with markup as text, runs no script and keeps the link', async () => {
    const link = new URL(await vault.connectLink('user:eve', 'weather_key', '<script>alert(1)</script>"><img src=x>'));
    const shown = await app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(shown.statusCode).toBe(200);
    expect(shown.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(shown.headers['content-security-policy']).toContain("default-src 'none'");
    expect(shown.body).not.toContain('<script');
    expect(shown.body).not.toContain('<img');
    expect(shown.body).toContain('for <strong>&#60;script&#62;alert(1)&#60;/script&#62;&#34;&#62;&#60;img src=x&#62;</strong>');
    expect(shown.body).not.toMatch(/\s(?:src|href)="/); // nothing loaded from elsewhere
    // Still unspent: Continue takes it, once.
    const press = () =>
      app.inject({
        method: 'POST',
        url: link.pathname,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ link: link.searchParams.get('link')! }).toString(),
      });
    const form = await press();
    expect(form.statusCode).toBe(200);
    expect(form.body).toContain('name="state"');
    expect((await press()).statusCode).toBe(403);
  });

  it('answers 410 with a page for a link that never existed, and 404 for an undeclared credential', async () => {
    const gone = await app.inject({ method: 'GET', url: `/connections/weather_key/start?link=${'A'.repeat(43)}` });
    expect(gone.statusCode).toBe(410);
    expect(gone.body).toContain('no longer works');
    expect((await app.inject({ method: 'GET', url: `/connections/nope/start?link=${'A'.repeat(43)}` })).statusCode).toBe(404);
  });
});
