/// <reference lib="dom" />
/**
 * "My connections" in headless Chromium, against the real app with a credential vault and a real
 * OAuth provider (oidc-provider): a key enters a secret's value (never shown back), asks for a connect
 * link, connects its account through it, sees the grant's scopes and expiry, and forgets it.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { launchChromium, type TestBrowser as Chromium } from '../helpers/browser.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { startTestProvider, TestBrowser, type TestProvider } from '../helpers/oauth-provider.ts';

const PUBLIC_URL = 'http://toolport.test';

describe('My connections in a browser', { timeout: 60_000 }, () => {
  let provider: TestProvider;
  let keys: TestKeys;
  let app: FastifyInstance;
  let base: string;
  let chromium: Chromium;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    provider = await startTestProvider({ redirectUris: [`${PUBLIC_URL}/connections/github/callback`] });
    keys = await testKeys(['*']);
    const toolsFile = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-connections-')), 'tools.json');
    await writeFile(
      toolsFile,
      JSON.stringify({
        credentials: {
          github: {
            type: 'oauth2',
            authorize_url: `${provider.issuer}/auth`,
            token_url: `${provider.issuer}/token`,
            client_id: provider.clientId,
            client_secret: provider.clientSecret,
            scopes: ['openid', 'offline_access'],
            issuer: provider.issuer,
          },
          weather_key: { type: 'secret' },
        },
      }),
    );
    app = await makeApp('memory', {
      env: { TOOLS_FILE: toolsFile, API_KEYS_FILE: keys.file, PUBLIC_URL, SECRETS_KEY: randomBytes(32).toString('hex') },
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
    await provider?.stop();
  });
  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  async function openConsole(secret: string): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('pageerror', (err) => pageErrors.push(String((err as Error).message ?? err)));
    await page.goto(`${base}/console#connections`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', secret);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#connections-list article');
    return page;
  }
  const mine = async (secret: string) => (await app.inject({ url: '/me/connections', headers: bearer(secret) })).json().connections;
  const card = (name: string) => `article[data-credential="${name}"]`;
  const text = (page: Page, selector: string) => page.$eval(selector, (element) => (element as HTMLElement).innerText);

  it("saves a secret's value without ever showing it, connects an account through a link, shows its scopes and expiry, and forgets it", async () => {
    const page = await openConsole(keys.agent);
    expect(await page.$eval('[data-page="connections"]', (link) => (link as HTMLElement).hidden)).toBe(false);
    expect(await page.$$eval('#connections-list article', (cards) => cards.map((c) => c.getAttribute('data-connected')))).toEqual(['false', 'false']);

    const value = `wk-${randomBytes(8).toString('hex')}`;
    await page.type(`${card('weather_key')} input[type="password"]`, value);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`${card('weather_key')}[data-connected="true"]`);
    expect(await text(page, '#connections-outcome')).toBe('Saved weather_key.');
    expect(await mine(keys.agent)).toEqual([expect.objectContaining({ name: 'weather_key', type: 'secret' })]);
    expect(await mine(keys.admin)).toEqual([]); // another key's vault is its own
    expect(await page.content()).not.toContain(value);

    const [connect] = await page.$$(`xpath/.//article[@data-credential="github"]//button[text()="Connect"]`);
    await connect!.click();
    const link = await page.waitForSelector(`${card('github')} a.button`);
    const url = await link!.evaluate((a) => (a as HTMLAnchorElement).href);
    expect(url).toMatch(new RegExp(`^${PUBLIC_URL}/connections/github/start\\?link=[A-Za-z0-9_-]{43}$`));
    expect(await link!.evaluate((a) => a.getAttribute('target'))).toBe('_blank');
    expect(await text(page, `${card('github')} .connect-link`)).toMatch(/works once, until \d\d:\d\d/);

    // The person opens the link and signs in at the provider (a scripted browser: the link points at PUBLIC_URL).
    const person = new TestBrowser('agent-person', {
      origin: PUBLIC_URL,
      async get(pathAndQuery, headers) {
        const answer = await app.inject({ method: 'GET', url: pathAndQuery, headers });
        return { status: answer.statusCode, headers: answer.headers, body: answer.body };
      },
      async post(path, headers, body) {
        const answer = await app.inject({ method: 'POST', url: path, headers, payload: body });
        return { status: answer.statusCode, headers: answer.headers, body: answer.body };
      },
    });
    const done = await person.connect(url);
    expect(done.body).toContain('github is connected');

    // The page notices by itself (it asks again while a link is open).
    await page.waitForSelector(`${card('github')}[data-connected="true"]`, { timeout: 8000 });
    expect(await text(page, `${card('github')} [data-fact="scopes"]`)).toContain('openid');
    expect(await text(page, `${card('github')} [data-fact="access until"]`)).toContain('renewed before then');
    expect(await text(page, '#connections-status')).toMatch(/^2 of 2 connected/);

    page.once('dialog', (dialog) => void dialog.accept());
    const [forget] = await page.$$(`xpath/.//article[@data-credential="github"]//button[text()="Forget"]`);
    await forget!.click();
    await page.waitForSelector(`${card('github')}[data-connected="false"]`);
    expect(await text(page, '#connections-outcome')).toBe('Forgot github.');
    expect((await mine(keys.agent)).map((c: { name: string }) => c.name)).toEqual(['weather_key']);
    await page.close();
  });

  it('answers a connect link only for a declared credential, and only to a caller', async () => {
    expect((await app.inject({ method: 'POST', url: '/me/connections/nope/link', headers: bearer(keys.agent) })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/me/connections/github/link' })).statusCode).toBe(401);
    const answer = await app.inject({ method: 'POST', url: '/me/connections/weather_key/link', headers: bearer(keys.agent) });
    expect(answer.statusCode).toBe(200);
    expect(answer.json()).toEqual({
      credential: 'weather_key',
      url: expect.stringContaining(`${PUBLIC_URL}/connections/weather_key/start?link=`),
      expires_at: expect.any(String),
    });
  });
});
