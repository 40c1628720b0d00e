/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The console's Tools page with a large real catalog, in headless Chromium: GitHub's whole REST
 * API (npm `@octokit/openapi`, 1,223 operations) beside a small Petstore and an upstream that is
 * gone. Grouped by source (a large source by its names' first words) and by toolset, groups built only when opened; the service's ranked
 * search with scores; a health strip per upstream; one column at 390 px with no sideways scroll.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Page } from 'puppeteer-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { launchChromium, type TestBrowser } from '../helpers/browser.ts';
import { toolOf } from '../helpers/github-queries.ts';
import { PETSTORE_DOCUMENT, startPetstore, type Petstore } from '../helpers/petstore.ts';
import { startNodeServer, type NodeServer } from '../helpers/upstreams.ts';

const GITHUB_DOCUMENT = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

describe('the Tools page with a large catalog', { timeout: 120_000 }, () => {
  let app: FastifyInstance;
  let base: string;
  let github: NodeServer;
  let petstore: Petstore;
  let chromium: TestBrowser;
  let githubTools = 0;
  const pageErrors: string[] = [];
  /** Numbers measured here, printed once at the end (the page's render times on this machine). */
  const measured: Record<string, number> = {};

  beforeAll(async () => {
    github = await startNodeServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
    petstore = await startPetstore();
    const gone = await startNodeServer((_req, res) => res.end());
    await gone.stop();
    const folder = await mkdtemp(join(tmpdir(), 'toolport-console-tools-'));
    const file = join(folder, 'tools.yaml');
    await writeFile(
      file,
      `openapi:
  - source: github
    spec: ${GITHUB_DOCUMENT}
    base_url: "${github.url}"
  - source: petstore
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${petstore.url}/api/v3"
    include: [getInventory, getPetById, findPetsByStatus]
  - source: gone
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${gone.url}/api/v3"
    include: [getInventory]
    breaker: {failures: 1, open_s: 600}
  - source: orders
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${petstore.url}/api/v3"
    include: [getOrderById]
  - source: users
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${petstore.url}/api/v3"
    include: [getUserByName]
toolsets:
  pets:
    description: The pet store.
    tools: ["petstore_*"]
  triage:
    tools: ["github_issues_*"]
`,
    );
    app = await makeApp('memory', { env: { TOOLS_FILE: file } });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    githubTools = app.toolport.registry.list().filter((t) => t.name.startsWith('github_')).length;
    chromium = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    console.log(`Tools page (${githubTools} GitHub tools): ${JSON.stringify(measured)}`);
    await chromium?.close();
    await app?.close();
    await github?.stop();
    await petstore?.stop();
  });
  afterEach(() => {
    expect(pageErrors.splice(0)).toEqual([]);
  });

  async function openTools(fragment = 'tools', width = 1280, height = 800): Promise<Page> {
    const page = await chromium.browser.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (err) => pageErrors.push(String((err as Error).message ?? err)));
    await page.setViewport({ width, height });
    const started = Date.now();
    await page.goto(`${base}/console#${fragment}`);
    await page.waitForSelector('details.tool-group[data-group="source:github"]');
    measured[`page ready at ${width} px (ms)`] = Date.now() - started;
    return page;
  }

  const call = (name: string, args: Record<string, unknown> = {}) =>
    fetch(`${base}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args }) });

  it("groups 1,200+ tools by source, then by their names' first words, building only the open groups, a hundred links at a time", async () => {
    expect(githubTools).toBeGreaterThan(1200);
    const page = await openTools();
    const groups = await page.$$eval('details.tool-group', (all) => all.map((d) => [d.getAttribute('data-group'), (d as HTMLDetailsElement).open]));
    expect(groups.map(([key]) => key)).toEqual(expect.arrayContaining(['source:built-in', 'source:github', 'source:petstore', 'source:gone']));
    expect(await page.$eval('details[data-group="source:github"] .group-count', (e) => e.textContent)).toBe(String(githubTools));
    // Only the group of the tool shown is built: far fewer links than tools.
    expect((await page.$$('#tool-list a')).length).toBeLessThan(150);

    // Grouping the whole catalog again, in the page's own clock.
    measured['group 1,2xx tools (ms)'] = await page.evaluate(() => {
      const select = document.getElementById('tool-group-by') as HTMLSelectElement;
      const started = performance.now();
      select.dispatchEvent(new Event('change'));
      return performance.now() - started;
    });
    expect(measured['group 1,2xx tools (ms)']).toBeLessThan(500);

    measured['open the GitHub group (ms)'] = await page.evaluate(() => {
      const started = performance.now();
      (document.querySelector('details[data-group="source:github"] > summary') as HTMLElement).click();
      return new Promise<number>((resolve) => requestAnimationFrame(() => resolve(performance.now() - started)));
    });
    // 1,223 tools open as sub-groups by their names' first words; no link is built yet.
    const github = 'details[data-group="source:github"]';
    await page.waitForSelector(`${github} details[data-group="source:github/github_issues"]`);
    const subGroups = await page.$$eval(`${github} details.tool-group`, (all) => all.map((d) => d.querySelector('.group-title')!.textContent));
    expect(subGroups.length).toBeGreaterThan(20);
    expect(subGroups).toEqual([...subGroups].sort());
    expect(subGroups).toEqual(expect.arrayContaining(['github_actions', 'github_issues', 'github_pulls', 'github_repos']));
    expect((await page.$$(`${github} a`)).length).toBe(0);

    // A sub-group of 200+ tools shows them a hundred at a time.
    const repos = `${github} details[data-group="source:github/github_repos"]`;
    const reposCount = Number(await page.$eval(`${repos} .group-count`, (e) => e.textContent));
    expect(reposCount).toBeGreaterThan(200);
    await page.click(`${repos} > summary`);
    await page.waitForFunction((selector) => document.querySelectorAll(`${selector} a`).length === 100, {}, repos);
    expect(await page.$eval(`${repos} .more`, (b) => b.textContent)).toBe(`Show 100 more (${reposCount - 100} not shown)`);
    await page.click(`${repos} .more`);
    expect((await page.$$(`${repos} a`)).length).toBe(200);

    // A tool deep in the catalog, opened by its address: its sub-group opens, its link is built, marked and in view.
    const last = app.toolport.registry
      .list()
      .filter((t) => t.name.startsWith('github_'))
      .at(-1)!.name;
    await page.evaluate((name) => (location.hash = `#tools/${name}`), last);
    const link = await page.waitForSelector(`#tool-list a[data-tool="${last}"][aria-current="true"]`);
    expect(await page.$eval('.tool-detail h2', (e) => e.textContent)).toBe(last);
    const inView = await link!.evaluate((a) => {
      const list = document.querySelector('.catalog nav')!.getBoundingClientRect();
      const box = a.getBoundingClientRect();
      return box.top >= list.top && box.bottom <= list.bottom;
    });
    expect(inView).toBe(true);
  });

  it("searches through the service's ranked search and shows the scores", async () => {
    const page = await openTools();
    const searches: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/tools/search')) searches.push(request.url());
    });
    await page.type('#tool-search', 'comment on an issue');
    const expected = toolOf('github', 'issues/create-comment');
    await page.waitForSelector(`#tool-list ul.results a[data-tool="${expected}"]`);
    const rows = await page.$$eval('#tool-list ul.results a', (links) =>
      links.map((a) => [a.getAttribute('data-tool'), a.querySelector('.score')?.textContent]),
    );
    // Exactly the service's ranking, best first, with its scores.
    const ranked = (await (await fetch(`${base}/tools/search?q=${encodeURIComponent('comment on an issue')}&limit=25`)).json()) as {
      tools: { name: string; score: number }[];
    };
    expect(rows).toEqual(ranked.tools.map((t) => [t.name, t.score.toFixed(2)]));
    expect(rows.length).toBe(25);
    expect(searches.at(-1)).toContain('q=comment%20on%20an%20issue');
    expect(await page.$eval('#tool-count', (e) => e.textContent)).toContain('ranked by the service');

    await page.click(`#tool-list a[data-tool="${expected}"]`);
    await page.waitForFunction((name) => document.querySelector('.tool-detail h2')?.textContent === name, {}, expected);
    // Enter in the box opens the best match.
    await page.evaluate(() => (location.hash = '#tools/tool_search'));
    await page.waitForFunction(() => document.querySelector('.tool-detail h2')?.textContent === 'tool_search');
    await page.focus('#tool-search');
    await page.keyboard.press('Enter');
    await page.waitForFunction((name) => document.querySelector('.tool-detail h2')?.textContent === name, {}, rows[0]![0]);
    expect(page.url()).toContain(`#tools/${rows[0]![0]}`);

    // Cleared: the groups are back.
    await page.click('#tool-search', { count: 3 });
    await page.keyboard.press('Backspace');
    await page.waitForSelector('details.tool-group');
  });

  it('shows a health strip per upstream: up after an answer, down with its last error, not called yet', async () => {
    expect((await call('petstore_getinventory')).status).toBe(200);
    expect(((await (await call('gone_getinventory')).json()) as { error: { code: string } }).error.code).toBe('upstream_unavailable');
    const page = await openTools();
    await page.waitForSelector('#health-strip:not([hidden])');
    const chip = (name: string) => page.$eval(`.health-chip[data-source="${name}"]`, (e) => [e.getAttribute('data-state'), (e as HTMLElement).innerText]);
    const [petState, petText] = await chip('petstore');
    expect(petState).toBe('up');
    const [goneState, goneText] = await chip('gone');
    expect(goneState).toBe('down');
    expect(goneText).toContain('upstream_unavailable');
    expect(goneText).toContain('1 of the last 1 call failed');
    // Its breaker opened at the first failure: the chip says so, and when it will probe.
    expect(goneText).toMatch(/breaker open[\s\S]*probes in \d+ s/);
    expect(await page.$('.health-chip[data-source="gone"] [data-breaker="open"]')).not.toBeNull();
    // Five upstreams: the healthy ones show only their name and state, the rest in their title.
    expect(petText).not.toContain('answered');
    expect(await page.$eval('.health-chip[data-source="petstore"]', (e) => e.getAttribute('title'))).toBe('OpenAPI · 3 tools · last 1 call answered');
    expect(await page.$$eval('.health-chip', (chips) => chips.map((c) => c.getAttribute('data-source')))).toEqual([
      'github',
      'petstore',
      'gone',
      'orders',
      'users',
    ]);
    const [githubState, githubText] = await chip('github');
    expect(githubState).toBe('unknown');
    expect(githubText).toContain('not called yet');
    expect(await page.$('.health-chip[data-source="built-in"]')).toBeNull();
    // The group headings carry the same state.
    expect(await page.$eval('details[data-group="source:gone"] .badge.state', (e) => e.getAttribute('data-state'))).toBe('down');

    // Read again while the page is shown: a call answered now turns the chip and the heading.
    expect(await page.$eval('details[data-group="source:orders"] .badge.state', (e) => e.getAttribute('data-state'))).toBe('unknown');
    expect(((await (await call('orders_getorderbyid', { orderId: 1 })).json()) as { error: { code: string } }).error.code).toBe('upstream_rejected');
    await page.waitForSelector('.health-chip[data-source="orders"][data-state="up"]', { timeout: 15_000 });
    expect(await page.$eval('details[data-group="source:orders"] .badge.state', (e) => e.getAttribute('data-state'))).toBe('up');

    // A tool of a source that is down says so beside its form.
    await page.evaluate(() => (location.hash = '#tools/gone_getinventory'));
    await page.waitForSelector('.tool-source .badge.state[data-state="down"]');
    expect(await page.$eval('.tool-source', (e) => e.textContent)).toMatch(/^gone down · last error: upstream_unavailable — endpoint unreachable/);

    // A chip opens its source's group.
    await page.click('.health-chip[data-source="petstore"] button');
    await page.waitForFunction(() => (document.querySelector('details[data-group="source:petstore"]') as HTMLDetailsElement | null)?.open === true);
    expect(await page.$$eval('details[data-group="source:petstore"] a', (links) => links.length)).toBe(3);
  });

  it('groups by toolset and narrows the catalog and the search to one toolset (GET /tools?toolset=)', async () => {
    const page = await openTools();
    await page.select('#tool-group-by', 'toolset');
    await page.waitForSelector('details[data-group="toolset:pets"]');
    const keys = await page.$$eval('#tool-list > details.tool-group', (all) => all.map((d) => d.getAttribute('data-group')));
    expect(keys).toEqual(['toolset:pets', 'toolset:triage', 'other']);
    expect(await page.$eval('details[data-group="toolset:pets"] .group-note', (e) => e.textContent)).toBe('The pet store.');

    await page.select('#tool-toolset', 'pets');
    await page.waitForFunction(() => document.getElementById('tool-count')?.textContent?.startsWith('3 tools'));
    await page.type('#tool-search', 'pet by id');
    await page.waitForSelector('#tool-list ul.results a');
    const names = await page.$$eval('#tool-list ul.results a', (links) => links.map((a) => a.getAttribute('data-tool')));
    expect(names.every((name) => name!.startsWith('petstore_'))).toBe(true);
    expect(names[0]).toBe('petstore_getpetbyid');
  });

  it('is one column at 390 px with no sideways scroll, the catalog above the tool', async () => {
    const longest = app.toolport.registry
      .list()
      .map((t) => t.name)
      .sort((a, b) => b.length - a.length)[0]!;
    const page = await openTools(`tools/${longest}`, 390, 844);
    await page.waitForSelector('form.try');
    await page.click('details[data-group="source:petstore"] > summary');
    await page.type('#tool-search', 'list the open pull requests of a repo');
    await page.waitForSelector('#tool-list ul.results a');
    const layout = await page.evaluate(() => {
      const box = (selector: string) => document.querySelector(selector)!.getBoundingClientRect();
      return {
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        catalog: box('.catalog').toJSON(),
        detail: box('.tool-detail').toJSON(),
        strip: box('#health-strip').toJSON(),
        listHeight: document.querySelector('.catalog nav')!.clientHeight,
      };
    });
    expect(layout.clientWidth).toBe(390);
    expect(layout.scrollWidth).toBeLessThanOrEqual(layout.clientWidth);
    expect(layout.catalog.right).toBeLessThanOrEqual(390);
    expect(layout.detail.right).toBeLessThanOrEqual(390);
    expect(layout.strip.right).toBeLessThanOrEqual(390);
    expect(layout.detail.top).toBeGreaterThanOrEqual(layout.catalog.bottom);
    // The list has room to read: most of a screen, not a sliver under the controls.
    expect(layout.listHeight).toBeGreaterThan(300);
    await page.screenshot({ path: join(tmpdir(), 'toolport-console-tools-390.png') });
  });
});
