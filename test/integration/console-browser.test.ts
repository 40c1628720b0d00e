/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The console (docs/console.md) in a real browser: headless Chromium driven by puppeteer-core against the
 * real app with API keys on. What a person does: give a key, find a tool, fill the form built from
 * its schema, run it and read the answer; watch calls and a plan change live; a key without admin
 * sees no arguments and no ledger actions.
 */
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { placeOrder } from '../fixtures/order-tool.ts';
import { makeApp } from '../helpers/app.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';

describe('the console in a browser', { timeout: 60_000 }, () => {
  let app: FastifyInstance;
  let base: string;
  let keys: TestKeys;
  let chromium: TestBrowser;
  /** Script errors of every page: a test fails when its page threw. */
  const pageErrors: string[] = [];

  async function newPage(): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('pageerror', (err) => pageErrors.push(String((err as Error).message ?? err)));
    page.on('console', (message) => {
      if (message.type() === 'error' && !/status of 40[134]/.test(message.text())) pageErrors.push(message.text());
    });
    return page;
  }

  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  beforeAll(async () => {
    keys = await testKeys(['echo', 'planning_*']);
    app = await makeApp('memory', { env: { API_KEYS_FILE: keys.file }, register: (registry) => registry.registerTool(placeOrder) });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });

  /** A call made outside the browser, as an agent or curl would. */
  async function call(secret: string, name: string, args: unknown, session?: string) {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(secret), ...(session && { 'x-session-id': session }) },
      body: JSON.stringify({ name, arguments: args }),
    });
    return (await response.json()) as Record<string, any>;
  }

  /** Opens the console at `#fragment`, gives it the key when it asks, and waits for the pages. */
  async function openConsole(secret: string, fragment: string): Promise<Page> {
    const page = await newPage();
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${base}/console#${fragment}`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', secret);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav', { visible: true, timeout: 8000 }).catch((err) => {
      throw new Error(`${err.message}; page errors: ${pageErrors.join(' | ')}`);
    });
    return page;
  }

  const text = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? '');

  it('asks for a key, finds a tool, fills the form built from its schema, runs the call and shows the answer', async () => {
    const page = await openConsole(keys.admin, 'tools');
    await page.waitForFunction(() => document.querySelector('#identity')?.textContent?.includes('ops'));

    await page.type('#tool-search', 'order');
    await page.waitForFunction(() => document.querySelectorAll('#tool-list a').length === 1);
    // The keyboard reaches the catalog from the search box.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toContain('place_order');
    await page.keyboard.press('Enter');
    await page.waitForSelector('form.try');
    expect(page.url()).toMatch(/#tools\/place_order$/);
    expect(await text(page, '.tool-detail')).toContain(placeOrder.description);

    await page.type('[name="customer.name"]', 'Ada');
    const tier = await page.$eval(
      '[name="customer.tier"]',
      (select) => [...(select as HTMLSelectElement).options].find((o) => o.textContent === 'gold')!.value,
    );
    await page.select('[name="customer.tier"]', tier);
    const [addItem] = await page.$$('xpath/.//button[text()="Add an item to items"]');
    await addItem!.click();
    await page.type('[name="items[0].sku"]', 'A-1');
    await page.type('[name="items[0].quantity"]', '3');
    await page.select('[name="express"]', '0'); // true
    await page.select('[name="format"]', 'anthropic');
    await page.click('form.try button[type="submit"]');

    await page.waitForSelector('#answer-summary');
    expect(await text(page, '#answer-summary')).toContain('success');
    const result = await text(page, '[aria-label="Result"]');
    expect(result).toContain('Order placed for Ada: 3 item(s).');
    expect(result).toMatch(/"tier": "gold"/);
    expect(result).toMatch(/"express": true/);
    const toolMessage = await text(page, '[aria-label="Tool message"]');
    expect(toolMessage).toContain('"type": "tool_result"');
    expect(toolMessage).toContain('"is_error": false');
    expect(await text(page, '[aria-label="Content"]')).toContain('Order placed for Ada');
    const curl = await text(page, '[aria-label="Equivalent curl"]');
    expect(curl).toContain('/tools/invoke?format=anthropic');
    expect(curl).toContain('$TOOLPORT_API_KEY');
    expect(curl).not.toContain(keys.admin);

    // The key lives in sessionStorage only: never in the URL, never in localStorage.
    expect(page.url()).not.toContain(keys.admin);
    expect(await page.evaluate(() => sessionStorage.getItem('toolport.apiKey'))).toBe(keys.admin);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
  });

  it('refuses a wrong key and says so', async () => {
    const page = await newPage();
    await page.goto(`${base}/console`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', 'sk-not-a-key');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.getElementById('key-error')?.textContent?.includes('refused'));
    expect(await page.$eval('#nav', (nav) => (nav as HTMLElement).hidden)).toBe(true);
  });

  it('shows a call made outside the browser in the live feed, with its arguments for an admin key', async () => {
    const page = await openConsole(keys.admin, 'calls');
    await page.waitForSelector('.feed-status[data-state="live"]');
    await call(keys.agent, 'echo', { text: 'hello from curl' }, 'feed-browser');
    const row = await page.waitForSelector('xpath/.//tr[@data-tool="echo"][.//a[text()="feed-browser"]]', { timeout: 5000 });
    expect(await row!.evaluate((tr) => tr.textContent)).toMatch(/echo.*success.*feed-browser.*agent/);
    await (await row!.$('button'))!.click();
    const details = await row!.evaluate((tr) => (tr.nextElementSibling as HTMLElement).innerText);
    expect(details).toContain('hello from curl');
  });

  it('updates a session plan live as its steps change', async () => {
    const session = 'plan-in-browser';
    await call(keys.admin, 'planning_setup_plan', { objective: 'Ship the console', initial_steps: ['Write it', 'Test it'] }, session);
    const page = await openConsole(keys.admin, `sessions/${session}`);
    await page.waitForSelector('#plan-steps li[data-step="1"][data-status="pending"]');
    expect(await text(page, '.objective')).toBe('Ship the console');

    await call(keys.admin, 'planning_update_step', { step_id: 1, status: 'done' }, session);
    // Sooner than the page's 5 s poll: the call feed told the page.
    await page.waitForSelector('#plan-steps li[data-step="1"][data-status="done"]', { timeout: 4000 });
    await page.waitForFunction(() => document.querySelectorAll('#session-events li').length === 2, { timeout: 4000 });
    expect(await text(page, '#session-events')).toContain('planning_update_step');
  });

  it('looks up a ledger entry and invalidates it with an admin key', async () => {
    const placed = await call(keys.admin, 'place_order', { customer: { name: 'Lin' }, items: [{ sku: 'C-3', quantity: 1 }] });
    expect(placed.idempotency_key).toEqual(expect.any(String));
    const page = await openConsole(keys.admin, `ledger/${encodeURIComponent(placed.idempotency_key)}`);
    const [invalidate] = await Promise.all([
      page.waitForSelector('xpath/.//button[text()="Invalidate this entry"]'),
      page.waitForFunction(() => document.body.innerText.includes('Order placed for Lin')),
    ]);
    page.once('dialog', (dialog) => void dialog.accept());
    await invalidate!.click();
    await page.waitForFunction(() => document.body.innerText.includes('The entry was invalidated.'));
    const after = await app.inject({ url: `/ledger/effects/${encodeURIComponent(placed.idempotency_key)}`, headers: bearer(keys.admin) });
    expect(after.statusCode).toBe(404);
  });

  it('shows a key without admin its own calls without arguments, and no ledger actions', async () => {
    const page = await openConsole(keys.agent, 'calls');
    await page.waitForSelector('.feed-status[data-state="live"]');
    await call(keys.admin, 'echo', { text: 'an admin call' }, 'not-for-agent');
    await call(keys.agent, 'echo', { text: 'arguments only admins see' }, 'agent-own');
    await page.waitForSelector('xpath/.//tr[@data-tool="echo"][.//a[text()="agent-own"]]', { timeout: 5000 });
    const table = await text(page, '#calls-table');
    expect(table).not.toContain('not-for-agent');
    expect(table).not.toContain('Details');
    const body = await page.evaluate(() => document.body.innerText);
    expect(body).not.toContain('arguments only admins see');
    expect(body).toContain('Arguments and results are shown to admin keys only');

    expect(await page.$eval('[data-page="ledger"]', (link) => (link as HTMLElement).hidden)).toBe(true);
    await page.evaluate(() => (location.hash = '#ledger'));
    await page.waitForSelector('#page-ledger:not([hidden])');
    expect(await text(page, '#page-ledger')).toContain('needs an admin key');
    expect(await page.$$('#page-ledger button, #page-ledger input')).toHaveLength(0);
    // Nor can it reach the ledger routes itself.
    const refused = await page.evaluate(
      async () => (await fetch('/ledger/effects/global:x', { headers: { authorization: `Bearer ${sessionStorage.getItem('toolport.apiKey')}` } })).status,
    );
    expect(refused).toBe(403);
  });
});
