/// <reference lib="dom" />
/**
 * The console's Audit page in headless Chromium: an admin key lists the audit entries and filters
 * them by kind; a key without admin sees no Audit link.
 */
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';

describe('the console audit page in a browser', { timeout: 60_000 }, () => {
  let app: FastifyInstance;
  let base: string;
  let keys: TestKeys;
  let chromium: TestBrowser;

  beforeAll(async () => {
    keys = await testKeys(['echo']);
    app = await makeApp('memory', { env: { API_KEYS_FILE: keys.file } });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  async function openConsole(secret: string, fragment: string): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    await page.goto(`${base}/console#${fragment}`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', secret);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav', { visible: true });
    return page;
  }

  it('lists the entries to an admin and filters them by kind', async () => {
    for (const text of ['one', 'two']) {
      await fetch(`${base}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...bearer(keys.agent) },
        body: JSON.stringify({ name: 'echo', arguments: { text } }),
      });
    }
    await fetch(`${base}/sessions/gone`, { method: 'DELETE', headers: bearer(keys.admin) });
    await new Promise((resolve) => setTimeout(resolve, 120)); // the batch is written within 50 ms
    const page = await openConsole(keys.admin, 'audit');
    await page.waitForFunction(() => document.querySelectorAll('#audit-table tbody tr').length === 3);
    const kinds = () => page.$$eval('#audit-table tbody tr td:nth-child(3)', (cells) => cells.map((cell) => cell.textContent));
    expect(await kinds()).toEqual(['admin', 'call', 'call']);
    const firstCall = await page.$eval('#audit-table tbody tr:nth-child(2)', (row) => row.textContent ?? '');
    expect(firstCall).toContain('agent');
    expect(firstCall).toContain('echo');
    await page.select('#audit-kind', 'admin');
    await page.click('form[aria-label="Filter the audit log"] button[type="submit"]');
    await page.waitForFunction(() => document.querySelectorAll('#audit-table tbody tr').length === 1);
    expect(await kinds()).toEqual(['admin']);
    await page.close();
  });

  it('shows no Audit link to a key without admin', async () => {
    const page = await openConsole(keys.agent, 'tools');
    expect(await page.$eval('#nav a[data-page="audit"]', (link) => (link as HTMLElement).hidden)).toBe(true);
    await page.close();
  });
});
