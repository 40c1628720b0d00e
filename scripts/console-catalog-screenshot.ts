/**
 * Takes docs/console-tools-catalog.png: the Tools page with GitHub's whole REST API (npm
 * `@octokit/openapi`, 1,223 operations) beside a small upstream that is down, grouped by source,
 * with the health strip. Run with: npx tsx scripts/console-catalog-screenshot.ts
 */
/// <reference lib="dom" />
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { launchChromium } from '../test/helpers/browser.ts';
import { PETSTORE_DOCUMENT } from '../test/helpers/petstore.ts';
import { startNodeServer } from '../test/helpers/upstreams.ts';

const DOCS = new URL('../docs/', import.meta.url);
const GITHUB_DOCUMENT = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');

// A stand-in for api.github.com that answers every call, and a port where nothing answers.
const github = await startNodeServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
const gone = await startNodeServer((_req, res) => res.end());
await gone.stop();
const folder = await mkdtemp(path.join(tmpdir(), 'toolport-catalog-shot-'));
const file = path.join(folder, 'tools.yaml');
await writeFile(
  file,
  `openapi:
  - source: github
    spec: ${GITHUB_DOCUMENT}
    base_url: "${github.url}"
  - source: petstore
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${gone.url}/api/v3"
toolsets:
  triage:
    description: Issues and labels only.
    tools: ["github_issues_*"]
`,
);
const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', TOOLS_FILE: file }));
const base = await app.listen({ port: 0, host: '127.0.0.1' });
const call = (name: string, args: unknown) =>
  fetch(`${base}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args }) });
await call('github_users_get-authenticated', {});
await call('github_issues_get', { owner: 'octo', repo: 'hello', issue_number: 1 });
await call('petstore_getinventory', {});

const chromium = await launchChromium();
try {
  const page = await chromium.browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(`${base}/console#tools/github_issues_create`);
  await page.waitForSelector('form.try');
  // The list from its top: the sources, GitHub's sub-groups, the open one further down.
  await page.evaluate(() => document.querySelector('.catalog nav')!.scrollTo(0, 0));
  await new Promise((resolve) => setTimeout(resolve, 400));
  await page.screenshot({ path: new URL('console-tools-catalog.png', DOCS).pathname });
  process.stdout.write('wrote docs/console-tools-catalog.png\n');
} finally {
  await chromium.close();
  await app.close();
  await github.stop();
}
