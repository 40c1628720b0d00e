/// <reference lib="dom" />
/**
 * The console's Approvals page in headless Chromium, against the real app with policy rules: a held
 * call appears live with its tool, arguments, caller, session and rule; an approver edits the
 * arguments in the tool's own form (the change shown against what was asked) and approves, or denies
 * with a note; a refused edit shows the service's reason; the caller that asked reads but cannot decide.
 */
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';
import { bearer } from '../helpers/keys.ts';

describe('the Approvals page in a browser', { timeout: 60_000 }, () => {
  let app: FastifyInstance;
  let base: string;
  let fx: PolicyFixture;
  let chromium: TestBrowser;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    fx = await policyFixture();
    app = await makeApp('memory', { env: fx.env, register: fx.register });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    chromium = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await chromium?.close();
    await app?.close();
  });
  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  async function openConsole(secret: string, fragment: string): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(8000);
    page.on('pageerror', (err) => pageErrors.push(String((err as Error).message ?? err)));
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(`${base}/console#${fragment}`);
    await page.waitForSelector('#key-input', { visible: true });
    await page.type('#key-input', secret);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#nav', { visible: true });
    return page;
  }

  async function invoke(name: string, args: unknown, session: string) {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...bearer(fx.keys.agent), 'x-session-id': session },
      body: JSON.stringify({ name, arguments: args }),
    });
    return (await response.json()) as Record<string, any>;
  }
  const approval = async (id: string) => (await app.inject({ url: `/approvals/${id}`, headers: bearer(fx.keys.ops) })).json();
  const card = (id: string) => `article[data-approval="${id}"]`;
  const text = (page: Page, selector: string) => page.$eval(selector, (element) => (element as HTMLElement).innerText);
  const button = async (page: Page, scope: string, label: string) => {
    const [found] = await page.$$(`xpath/.//article[@data-approval="${scope}"]//button[text()="${label}"]`);
    if (found === undefined) throw new Error(`no button "${label}" in approval ${scope}`);
    return found;
  };

  it('shows a held call live, edits its arguments in the tool form with the change diffed, and approves: the call runs with them', async () => {
    const page = await openConsole(fx.keys.ops, 'approvals');
    await page.waitForFunction(() => /0 pending approvals/.test(document.querySelector('#approvals-status')?.textContent ?? ''));

    const held = await invoke('payments_refund', { order: 'A-17', amount: 1500 }, 's-pay');
    expect(held.error.code).toBe('approval_required');
    const id = held.approval.id as string;
    await page.waitForSelector(card(id), { timeout: 5000 });
    expect(await text(page, '[data-page="approvals"] .count')).toBe('1');
    const shown = await text(page, card(id));
    expect(shown).toContain('payments_refund');
    expect(shown).toMatch(/"amount": 1500/);
    expect(await text(page, `${card(id)} [data-fact="caller"]`)).toBe('agent');
    expect(await text(page, `${card(id)} [data-fact="session"]`)).toBe('s-pay');
    expect(await text(page, `${card(id)} [data-fact="rule"]`)).toBe('policy[0]');
    expect(await text(page, `${card(id)} [data-fact="approvers"]`)).toBe('finance, client');

    await (await button(page, id, 'Edit arguments…')).click();
    const amount = `${card(id)} form.edit-arguments [name="amount"]`;
    await page.waitForSelector(amount);
    expect(await page.$eval(amount, (input) => (input as HTMLInputElement).value)).toBe('1500');
    expect(await text(page, `${card(id)} .diff-live`)).toContain('as asked');
    await page.click(amount, { clickCount: 3 });
    await page.type(amount, '900');
    await page.waitForSelector(`${card(id)} .diff-live tr.diff-changed[data-path="amount"]`);
    expect(await text(page, `${card(id)} .diff-live tr[data-path="amount"] del`)).toBe('1500');
    expect(await text(page, `${card(id)} .diff-live tr[data-path="amount"] ins`)).toBe('900');
    await page.type(`${card(id)} input[id^="note"]`, 'half now, half later');
    await (await button(page, id, 'Approve with these arguments')).click();

    await page.waitForFunction(() => document.querySelector('#approvals-outcome')?.textContent?.includes('Approved payments_refund with edited arguments'));
    await page.waitForSelector(card(id), { hidden: true }); // no longer pending
    expect(await page.$eval('[data-page="approvals"] .count', (badge) => (badge as HTMLElement).hidden)).toBe(true);
    expect(await approval(id)).toMatchObject({
      status: 'approved',
      arguments: { order: 'A-17', amount: 900 },
      requested_arguments: { order: 'A-17', amount: 1500 },
      decision: { by: 'ops', note: 'half now, half later', arguments_edited: true },
    });

    // The model repeats its call: it runs now, with the approver's arguments.
    expect(await invoke('payments_refund', { order: 'A-17', amount: 1500 }, 's-pay')).toMatchObject({ success: true });
    expect(fx.last.get('payments_refund')).toEqual({ order: 'A-17', amount: 900 });

    // Under "All", the record shows both: what was asked, and what ran.
    await page.select('#approvals-filter', '');
    await page.waitForSelector(`${card(id)}[data-status="executed"] table.diff tr[data-path="amount"]`);
    expect(await text(page, `${card(id)} table.diff`)).toMatch(/amount\s+\(changed\)\s+1500\s+900/);
    await page.close();
  });

  it("shows the service's reason when edited arguments break the schema, and denies with a note", async () => {
    const held = await invoke('send_letter', { order: 'L-1', amount: 3 }, 's-letter');
    const id = held.approval.id as string;
    // The finance key decides letters but may call no tool: its editor falls back to JSON.
    const page = await openConsole(fx.keys.finance, `approvals/${id}`);
    await page.waitForSelector(card(id));
    expect(await text(page, `${card(id)} [data-fact="rule"]`)).toBe("the tool's own approval");
    await (await button(page, id, 'Edit arguments…')).click();
    await page.waitForSelector(`${card(id)} form.edit-arguments textarea`);
    expect(await text(page, `${card(id)} form.edit-arguments`)).toContain('edit the arguments as JSON');
    await page.$eval(`${card(id)} form.edit-arguments textarea`, (area) => ((area as HTMLTextAreaElement).value = ''));
    await page.type(`${card(id)} form.edit-arguments textarea`, '{"order": "L-1", "amount": 200000}');
    await page.waitForSelector(`${card(id)} .diff-live tr[data-path="amount"]`);
    await (await button(page, id, 'Approve with these arguments')).click();
    await page.waitForFunction((selector) => /maximum|<= 100000|100000/.test(document.querySelector(selector)?.textContent ?? ''), {}, `${card(id)} .error`);
    expect((await approval(id)).status).toBe('pending');

    await page.type(`${card(id)} input[id^="note"]`, 'not this month');
    await (await button(page, id, 'Deny')).click();
    await page.waitForSelector(`${card(id)}[data-status="denied"]`);
    expect(await text(page, `${card(id)} [data-fact="decided"]`)).toContain('not this month');
    const denied = await invoke('send_letter', { order: 'L-1', amount: 3 }, 's-letter');
    expect(denied).toMatchObject({ success: false, error: { code: 'approval_denied' } });
    expect(denied.message).toContain('not this month');
    expect(fx.runs.get('send_letter')).toBeUndefined();
    await page.close();
  });

  it('lets the caller that asked read its approval but offers it no decision; counts what waits for an approver on the link', async () => {
    // An approver on another page: the held call in the feed puts the count on the Approvals link.
    const ops = await openConsole(fx.keys.ops, 'calls');
    await ops.waitForSelector('.feed-status[data-state="live"]');
    expect(await ops.$eval('[data-page="approvals"] .count', (badge) => (badge as HTMLElement).hidden)).toBe(true);
    const held = await invoke('payments_refund', { order: 'B-2', amount: 5000 }, 's-own');
    const id = held.approval.id as string;
    await ops.waitForSelector('[data-page="approvals"] .count:not([hidden])', { timeout: 5000 });
    expect(await ops.$eval('[data-page="approvals"] .count', (badge) => [badge.textContent, badge.getAttribute('aria-label')])).toEqual([
      '1',
      '1 waiting for your decision',
    ]);
    await ops.close();
    const page = await openConsole(fx.keys.agent, 'approvals');
    await page.waitForSelector(card(id));
    expect(await text(page, card(id))).toContain('may read the approval but not decide it');
    expect(await page.$$(`${card(id)} button`)).toHaveLength(0);
    // A key that may neither decide nor read it does not see it at all.
    const stranger = await openConsole(fx.keys.stranger, 'approvals');
    await stranger.waitForFunction(() => /0 pending approvals/.test(document.querySelector('#approvals-status')?.textContent ?? ''));
    expect(await stranger.$(card(id))).toBeNull();
    await page.close();
    await stranger.close();
  });

  it('says so when an approval being edited is decided by someone else', async () => {
    const held = await invoke('payments_refund', { order: 'C-3', amount: 7000 }, 's-race');
    const id = held.approval.id as string;
    const page = await openConsole(fx.keys.ops, 'approvals');
    await page.waitForSelector(card(id));
    await (await button(page, id, 'Edit arguments…')).click();
    await page.waitForSelector(`${card(id)} form.edit-arguments`);
    const other = await app.inject({
      method: 'POST',
      url: `/approvals/${id}/decision`,
      headers: bearer(fx.keys.finance),
      payload: { decision: 'deny', note: 'no' },
    });
    expect(other.statusCode).toBe(200);
    await page.waitForSelector(card(id), { hidden: true, timeout: 5000 });
    expect(await text(page, '#approvals-outcome')).toBe(`Approval ${id} (payments_refund) was decided elsewhere; open All to see how.`);
    await page.close();
  });
});
