/**
 * Takes the screenshots of docs/console.md: builds the app with API keys and a demo tool, makes a
 * few calls, and photographs each console page in headless Chromium (1280×800, and one at phone
 * width). Run with: npx tsx scripts/console-screenshots.ts
 */
/// <reference lib="dom" />
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { defineTool, ok } from '../src/index.ts';
import { launchChromium } from '../test/helpers/browser.ts';

const DOCS = new URL('../docs/', import.meta.url);
const secret = `sk-demo-${randomUUID()}`;
const keysDir = await mkdtemp(path.join(tmpdir(), 'toolport-shots-'));
const keysFile = path.join(keysDir, 'keys.json');
await writeFile(keysFile, JSON.stringify([{ id: 'ops', key_sha256: createHash('sha256').update(secret).digest('hex'), tools: ['*'], admin: true }]));

const createTicket = defineTool({
  name: 'create_ticket',
  description: 'Open a ticket in the issue tracker, with labels and an assignee.',
  parameters: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 120 },
      priority: { type: 'string', enum: ['low', 'normal', 'urgent'] },
      labels: { type: 'array', items: { type: 'string' }, maxItems: 5 },
      assignee: {
        type: 'object',
        properties: { name: { type: 'string' }, email: { type: 'string', format: 'email' } },
        required: ['name'],
        additionalProperties: false,
      },
    },
    required: ['title', 'priority'],
  },
  idempotency: { strategy: 'auto', scope: 'global' },
  handler: (params) => ok({ ticket: 'T-1042', ...params }, `Ticket T-1042 opened: ${String(params.title)}`),
});

const config = loadConfig({ LOG_LEVEL: 'silent', API_KEYS_FILE: keysFile, TOOL_PLUGINS: 'examples/plugins/calculator.ts' });
const app = await buildApp(config, { register: (registry) => registry.registerTool(createTicket) });
const base = await app.listen({ port: 0, host: '127.0.0.1' });

async function call(name: string, args: unknown, session?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${base}/tools/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${secret}`, ...(session && { 'x-session-id': session }) },
    body: JSON.stringify({ name, arguments: args }),
  });
  return (await response.json()) as Record<string, unknown>;
}

const session = 'release-2026-11';
await call(
  'planning_setup_plan',
  { objective: 'Release toolport 0.2', initial_steps: ['Freeze the branch', 'Run the soak test', 'Write the release notes', 'Tag and publish'] },
  session,
);
await call('planning_update_step', { step_id: 1, status: 'done' }, session);
await call('planning_update_step', { step_id: 2, status: 'in_progress' }, session);
await call('add', { a: 2, b: 3 });
await call('divide', { dividend: 1, divisor: 0 });
const ticket = await call('create_ticket', { title: 'Soak test flakes on replica restart', priority: 'urgent', labels: ['ci'] }, session);
await call('planning_read_plan', {}, session);
await call('weather_now', { city: 'Lisbon' });
await call('add', { a: 'two', b: 3 });

const chromium = await launchChromium();
try {
  const page = await chromium.browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`${base}/console#tools/create_ticket`);
  await page.waitForSelector('#key-input', { visible: true });
  await page.type('#key-input', secret);
  await page.keyboard.press('Enter');
  await page.waitForSelector('form.try');

  /** A screenshot of the viewport (`whole`: grown to the page's height first, so sticky parts stay on top). */
  const shoot = async (file: string, whole = false) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    if (whole) await page.setViewport({ width: 1280, height: await page.evaluate(() => document.documentElement.scrollHeight) });
    await page.screenshot({ path: new URL(file, DOCS).pathname });
    if (whole) await page.setViewport({ width: 1280, height: 800 });
    process.stdout.write(`wrote docs/${file}\n`);
  };
  const go = async (fragment: string, ready: string) => {
    await page.evaluate((hash) => (location.hash = hash), fragment);
    await page.waitForSelector(ready);
  };

  await page.type('[name="title"]', 'Console shows the wrong time zone');
  await page.select('[name="priority"]', '1');
  const [addLabel] = await page.$$('xpath/.//button[text()="Add an item to labels"]');
  await addLabel!.click();
  await page.type('[name="labels[0]"]', 'console');
  await page.type('[name="assignee.name"]', 'Ada');
  await page.select('[name="format"]', 'openai');
  await page.click('form.try button[type="submit"]');
  await page.waitForSelector('#answer-summary');
  await shoot('console-tools.png', true);

  await go('#calls', '.feed-status[data-state="live"]');
  const [show] = await page.$$('xpath/.//tr[@data-tool="create_ticket"]//button');
  await show!.click();
  await shoot('console-calls.png');

  await go(`#sessions/${session}`, '#plan-steps');
  await page.waitForSelector('#session-events');
  await shoot('console-sessions.png');

  await go(`#ledger/${encodeURIComponent(String(ticket.idempotency_key))}`, 'xpath/.//button[text()="Invalidate this entry"]');
  await shoot('console-ledger.png');

  await page.setViewport({ width: 390, height: 844, isMobile: true });
  await go('#calls', '#calls-table');
  await shoot('console-phone.png');
} finally {
  await chromium.close();
  await app.close();
}
