/// <reference lib="dom" />
/**
 * The console in headless Chromium when things are not fine, and signing in with a token: a slow
 * service shows "Loading…", a stopped one "Service unreachable" on every page (and the page recovers
 * by itself when the service is back), a refused key or token brings back the sign-in form saying
 * why; an access token of the identity provider signs in like an API key.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const PUBLIC_URL = 'http://toolport.test';
const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const ADMIN = `sk-admin-${randomUUID()}`;
/** Every page, at a fragment that makes it ask the service something. */
const PAGES = ['tools/echo', 'calls', 'sessions/s-1', 'tasks', 'ledger/global:x'];

describe('the console when the service is slow, stopped or refuses the key; signing in with a token', { timeout: 90_000 }, () => {
  let issuer: TestIssuer;
  let keysFile: string;
  let app: FastifyInstance;
  let base: string;
  /** A plain HTTP proxy in front of the app that holds each request `delayMs` when set. */
  let proxy: NodeServer;
  let delayMs = 0;
  let chromium: TestBrowser;
  const pageErrors: string[] = [];

  const startApp = () => makeApp('memory', { env: { API_KEYS_FILE: keysFile, AUTH_ISSUER: issuer.issuer, PUBLIC_URL } });

  beforeAll(async () => {
    issuer = await startIssuer();
    keysFile = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-console-')), 'keys.json');
    await writeFile(
      keysFile,
      JSON.stringify({
        keys: [{ id: 'ops', key_sha256: sha(ADMIN), tools: ['*'], admin: true }],
        access: [{ groups: ['staff'], tools: ['echo', 'planning_*'] }],
      }),
    );
    app = await startApp();
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    proxy = await startNodeServer((req: IncomingMessage, res: ServerResponse) => {
      const forward = () => {
        const upstream = httpRequest(`${base}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
      };
      const slow = delayMs > 0 && !req.url!.startsWith('/console');
      if (slow) setTimeout(forward, delayMs);
      else forward();
    });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await proxy?.stop();
    await app?.close();
    await issuer?.close();
  });
  afterEach(() => {
    delayMs = 0;
    expect(pageErrors.splice(0)).toEqual([]);
  });

  async function newPage(): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('pageerror', (err) => pageErrors.push(String((err as Error).message ?? err)));
    return page;
  }

  async function signIn(page: Page, origin: string, secret: string, fragment = 'tools'): Promise<void> {
    await page.goto(`${origin}/console#${fragment}`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', secret);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav', { visible: true });
  }

  const go = (page: Page, fragment: string) => page.evaluate((f) => (location.hash = `#${f}`), fragment);
  const bodyText = (page: Page) => page.evaluate(() => document.body.innerText);

  it('shows Loading… on every page while the service is slow to answer, and the page once it has', async () => {
    delayMs = 1500; // below the Tasks page's 2 s poll, so its answers do not overlap
    const page = await newPage();
    await page.goto(`${proxy.url}/console#calls`);
    // Before anything is known: the first question (who is this?) is slow.
    await page.waitForSelector('#busy', { visible: true, timeout: 2000 });
    await page.waitForSelector('#key-input', { visible: true, timeout: 8000 });
    await page.type('#key-input', ADMIN);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#busy', { visible: true, timeout: 2000 });
    await page.waitForSelector('#nav', { visible: true, timeout: 15_000 });
    // The calls page lives on the feed's stream: it says it is connecting until the stream is open.
    expect(await page.$eval('.feed-status', (status) => [status.getAttribute('data-state'), status.textContent])).toEqual([
      'connecting',
      'Connecting… · 0 calls',
    ]);
    await page.waitForSelector('.feed-status[data-state="live"]', { timeout: 8000 });
    for (const fragment of PAGES.filter((f) => f !== 'calls')) {
      await go(page, fragment);
      await page.waitForSelector('#busy', { visible: true, timeout: 2000 });
      expect(await page.$eval('#busy', (busy) => busy.textContent)).toContain('Loading');
      expect(await page.$eval('#main', (main) => main.getAttribute('aria-busy'))).toBe('true');
      await page.waitForSelector('#busy', { hidden: true, timeout: 8000 });
    }
    delayMs = 0;
    await page.close();
  });

  it('says "Service unreachable" on every page when the service stops, and recovers by itself when it is back', async () => {
    const own = await startApp();
    const origin = await own.listen({ port: 0, host: '127.0.0.1' });
    const page = await newPage();
    await signIn(page, origin, ADMIN, 'tasks');
    await page.waitForFunction(() => document.querySelector('#page-tasks')?.textContent?.includes('0 tasks'));
    await own.close();
    for (const fragment of [...PAGES, 'tasks']) {
      await go(page, fragment);
      await page.waitForSelector('#unreachable', { visible: true, timeout: 5000 });
      expect(await page.$eval('#unreachable', (alert) => alert.getAttribute('role'))).toBe('alert');
      expect(await bodyText(page)).toContain('Service unreachable: toolport did not answer');
    }
    // Back on the same port: the banner goes and the page shown loads again, without a reload.
    const again = await startApp();
    await again.listen({ port: Number(new URL(origin).port), host: '127.0.0.1' });
    try {
      await page.waitForSelector('#unreachable', { hidden: true, timeout: 10_000 });
      await page.waitForFunction(() => /0 tasks · updated/.test(document.querySelector('#page-tasks')?.textContent ?? ''));
    } finally {
      await page.close();
      await again.close();
    }
  });

  it('brings back the sign-in form saying "Key refused" on every page when the key stops working', async () => {
    for (const fragment of PAGES) {
      const page = await newPage();
      await signIn(page, base, ADMIN, 'tools');
      await page.waitForSelector('#tool-list a');
      // The key is revoked while the page is open: the next request is refused.
      await page.evaluate(() => sessionStorage.setItem('toolport.apiKey', 'sk-revoked'));
      if (fragment === 'calls') await page.reload();
      else await go(page, fragment);
      await page.waitForSelector('#key-page', { visible: true });
      expect(await page.$eval('#key-error', (error) => error.textContent)).toMatch(/^Key refused: the service refused this key or token/);
      expect(await page.$eval('#nav', (nav) => getComputedStyle(nav).display)).toBe('none');
      expect(await page.$$eval('#main > section.page', (pages) => pages.filter((p) => !(p as HTMLElement).hidden).map((p) => p.id))).toEqual(['key-page']);
      expect(await page.evaluate(() => sessionStorage.getItem('toolport.apiKey'))).toBeNull();
      await page.close();
    }
  });

  it("signs in with the identity provider's access token, shows the user, and keeps the token in this tab only", async () => {
    const token = await issuer.sign({ sub: 'alice', aud: PUBLIC_URL, groups: ['staff'] }, { expiresIn: '10m' });
    const page = await newPage();
    await signIn(page, base, token, 'tools');
    await page.waitForFunction(() => document.querySelector('#identity')?.textContent?.includes('Signed in as alice'));
    expect(await page.$eval('#identity', (box) => box.textContent)).toMatch(/token until \d\d:\d\d/);
    // The user's own tools (the access rule for staff), and no ledger page: not an admin.
    await page.waitForSelector('#tool-list a');
    const tools = await page.$$eval('#tool-list a', (links) => links.map((a) => a.textContent ?? ''));
    expect(tools.some((name) => name.includes('echo'))).toBe(true);
    expect(tools.some((name) => name.includes('slow'))).toBe(false);
    expect(await page.$eval('[data-page="ledger"]', (link) => (link as HTMLElement).hidden)).toBe(true);
    expect(await page.evaluate(() => sessionStorage.getItem('toolport.apiKey'))).toBe(token);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(page.url()).not.toContain(token);

    // Sign out forgets it.
    const [signOut] = await page.$$('xpath/.//button[text()="Sign out"]');
    await signOut!.click();
    await page.waitForSelector('#key-input', { visible: true });
    expect(await page.evaluate(() => sessionStorage.getItem('toolport.apiKey'))).toBeNull();
    await page.close();
  });

  it('refuses an expired token and says why', async () => {
    const expired = await issuer.sign({ sub: 'alice', aud: PUBLIC_URL, groups: ['staff'], exp: Math.floor(Date.now() / 1000) - 600 });
    const page = await newPage();
    await page.goto(`${base}/console`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', expired);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('key-error')?.textContent?.includes('Key refused'));
    expect(await page.$eval('#key-error', (error) => error.textContent)).toMatch(/expired/);
    expect(await page.$eval('#nav', (nav) => getComputedStyle(nav).display)).toBe('none');
    await page.close();
  });
});
