/**
 * The package as a user gets it (docs/plugins.md, docs/cli.md): `npm pack`,
 * installed with `--engine-strict` into fresh folders outside the repository — the plugin
 * template of examples/ (an ES module project) and a CommonJS project — then imported from .mjs
 * and type-checked from .ts, its plugins served through the real app, plugins of every extension
 * checked from both kinds of project, and the `toolport` command started from there.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../support/ports.ts';
import { makeApp, post } from '../helpers/app.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');

let folder: string;
/** The plugin template: an ES module project ("type": "module"). */
let project: string;
/** A CommonJS project (no "type"). */
let commonjs: string;
const installLogs: string[] = [];
let app: FastifyInstance;
const children: ChildProcess[] = [];

/** One plugin per extension; `.js` is CommonJS or ES syntax as the project says. */
function writePlugins(folder: string, kind: 'cjs' | 'esm'): void {
  const definition = (name: string) =>
    `{ name: '${name}', description: 'Answers its extension.', parameters: { type: 'object', properties: {} }, handler: () => ok('${name}') }`;
  writeFileSync(join(folder, 'typed.ts'), `import { defineTool, ok } from 'toolport';\nexport default defineTool(${definition('from_ts')});\n`);
  writeFileSync(join(folder, 'typed-module.mts'), `import { defineTool, ok } from 'toolport';\nexport default defineTool(${definition('from_mts')});\n`);
  writeFileSync(join(folder, 'module.mjs'), `import { ok } from 'toolport';\nexport default [${definition('from_mjs')}];\n`);
  writeFileSync(
    join(folder, 'plain.js'),
    kind === 'cjs'
      ? `const { ok } = require('toolport');\nmodule.exports = ${definition('from_js')};\n`
      : `import { ok } from 'toolport';\nexport default ${definition('from_js')};\n`,
  );
}

const PLUGINS = './typed.ts,./typed-module.mts,./plain.js,./module.mjs';

/** `npm install` of the tarball refusing any dependency whose engines exclude this Node (--engine-strict). */
async function install(tarball: string, cwd: string): Promise<void> {
  const { stdout, stderr } = await run('npm', ['install', tarball, '--engine-strict', '--prefer-offline', '--no-audit', '--no-fund'], {
    cwd,
    maxBuffer: 16 * 1024 * 1024,
  });
  installLogs.push(stdout + stderr);
}

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'toolport-package-'));
  // prepack builds dist/ (compiled JavaScript and declarations) before the tarball is made.
  const packed = await run('npm', ['pack', '--pack-destination', folder, '--json'], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
  const tarball = join(folder, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
  project = join(folder, 'my-tools');
  cpSync(join(ROOT, 'examples/plugin-template'), project, { recursive: true });
  writePlugins(project, 'esm');
  commonjs = join(folder, 'commonjs-project');
  mkdirSync(commonjs);
  writeFileSync(join(commonjs, 'package.json'), JSON.stringify({ name: 'commonjs-project', version: '1.0.0', private: true }));
  writePlugins(commonjs, 'cjs');
  await Promise.all([install(tarball, project), install(tarball, commonjs)]);
  app = await makeApp('memory', { env: { TOOLS_FILE: join(project, 'tools.yaml') } });
}, 300_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  const closing = Date.now();
  await app?.close();
  const closedIn = Date.now() - closing;
  // Two installed projects: tens of thousands of files, deleted by a process of its own so that a slow
  // disk never holds this file's end (a synchronous delete blocked the worker past its hook timeout).
  if (folder) spawn('rm', ['-rf', folder], { detached: true, stdio: 'ignore' }).unref();
  expect(closedIn).toBeLessThan(30_000);
}, 60_000);

describe('the toolport package installed outside the repository', () => {
  it('installs with --engine-strict and without one engine warning', () => {
    expect(installLogs).toHaveLength(2);
    for (const log of installLogs) expect(log).not.toMatch(/EBADENGINE|Unsupported engine/);
  });

  it.each([
    ['an ES module project', () => project],
    ['a CommonJS project', () => commonjs],
  ])(
    'loads .ts, .mts, .js and .mjs plugins in %s (toolport check)',
    async (_kind, where) => {
      const { stdout } = await run(join(where(), 'node_modules/.bin/toolport'), ['check'], {
        cwd: where(),
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TOOL_PLUGINS: PLUGINS, BUILTINS: 'none' },
      });
      expect(
        stdout
          .trim()
          .split('\n')
          .map((line) => line.split(/\s+/).slice(0, 2).join(' ')),
      ).toEqual(['from_ts plugin', 'from_mts plugin', 'from_js plugin', 'from_mjs plugin']);
    },
    60_000,
  );

  it('gives defineTool, ok and error to plain JavaScript', async () => {
    const script = "import { defineTool, ok, error } from 'toolport'; console.log(JSON.stringify([typeof defineTool, ok(1, 'one'), error('no')]));";
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project });
    expect(JSON.parse(stdout)).toEqual([
      'function',
      { message: 'one', value: 1, success: true, exclude_value_from_context: false },
      { message: 'no', value: null, success: false, exclude_value_from_context: false },
    ]);
  });

  it('exports the typed client as toolport/client, to CommonJS and ES modules alike', async () => {
    const script =
      "import { ToolportClient, NotFoundError } from 'toolport/client'; const c = new ToolportClient({ baseUrl: 'http://127.0.0.1:9' }); console.log(typeof c.invoke, typeof NotFoundError);";
    const [esm, cjs] = await Promise.all([
      run(process.execPath, ['--input-type=module', '-e', script], { cwd: project }),
      run(
        process.execPath,
        ['-e', "const { ToolportClient } = require('toolport/client'); console.log(typeof new ToolportClient({ baseUrl: 'http://x' }).listTools);"],
        { cwd: commonjs },
      ),
    ]);
    expect(esm.stdout).toBe('function function\n');
    expect(cjs.stdout).toBe('function\n');
  });

  it('types TypeScript plugins from its declarations: the template checks, a wrong handler does not', async () => {
    await expect(run(process.execPath, [TSC, '-p', project], { cwd: project })).resolves.toBeDefined();
    const wrong = join(project, 'src/wrong.ts');
    cpSync(join(project, 'src/index.ts'), wrong);
    await run('sh', [
      '-c',
      `printf '%s\\n' "export const bad = defineTool<{ n: number }>({ name: 'bad', description: 'x', parameters: { type: 'object' }, handler: ({ n }) => ok(n.toUpperCase()) });" >> ${wrong}`,
    ]);
    const failed = await run(process.execPath, [TSC, '-p', project], { cwd: project }).then(
      () => null,
      (err: { stdout: string }) => err.stdout,
    );
    rmSync(wrong);
    expect(failed).toMatch(/wrong\.ts.*Property 'toUpperCase' does not exist on type 'number'/);
  }, 120_000);

  it('serves the template plugins (.ts and .mjs) from there through the real app: sessions, ledger, progress', async () => {
    const clock = await post(app, { name: 'clock_now', arguments: {} });
    expect(clock.body.success).toBe(true);

    const lonely = await post(app, { name: 'todo_add', arguments: { title: 'water the plants' } });
    expect(lonely.body.success).toBe(false);
    expect(lonely.body.message).toContain('send the X-Session-Id header');

    const session = { 'x-session-id': `todo-${Date.now()}` };
    const first = await post(app, { name: 'todo_add', arguments: { title: 'water the plants' } }, session);
    const retry = await post(app, { name: 'todo_add', arguments: { title: 'water the plants' } }, session);
    const second = await post(app, { name: 'todo_add', arguments: { title: 'call the plumber' } }, session);
    expect(first.body.value.count).toBe(1);
    expect(retry.body.replayed).toBe(true);
    expect(retry.body.value.count).toBe(1);
    expect(second.body.value.count).toBe(2);
    expect((await post(app, { name: 'todo_list', arguments: {} }, session)).body.message).toBe('1. [ ] water the plants\n2. [ ] call the plumber');

    const streamed = await app.inject({
      method: 'POST',
      url: '/tools/invoke',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...session },
      payload: { name: 'todo_export', arguments: { format: 'csv' } },
    });
    const events = streamed.body
      .split('\n\n')
      .filter((b) => b.trim() !== '')
      .map((block) => ({
        event: /^event: (.*)$/m.exec(block)?.[1],
        data: JSON.parse(/^data: (.*)$/m.exec(block)?.[1] ?? 'null'),
      }));
    const progress = events.filter((e) => e.event === 'progress');
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress.at(-1)!.data).toMatchObject({ total: 2 });
    const result = events.find((e) => e.event === 'result')!.data;
    expect(result.value.text).toBe('id,title,done\n1,"water the plants",false\n2,"call the plumber",false');
    expect(result.content).toBe('Exported 2 items as csv.');
  });

  it('starts the service with the `toolport` command (what `npx toolport` runs), reading TOOLS_FILE from the environment', async () => {
    const [port] = await freePorts(1);
    // The installed bin itself rather than npx, so SIGTERM reaches the server and not npm.
    const child = spawn(join(project, 'node_modules/.bin/toolport'), [], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port), TOOLS_FILE: 'tools.yaml', LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const base = `http://127.0.0.1:${port}`;
    const until = Date.now() + 60_000;
    let healthy = false;
    while (!healthy && Date.now() < until && child.exitCode === null) {
      healthy = await fetch(`${base}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!healthy) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(healthy, `npx toolport did not come up: ${stderr}`).toBe(true);
    const answer = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'clock_now', arguments: {} }),
    });
    expect(((await answer.json()) as { success: boolean }).success).toBe(true);
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode).toBe(0);
  }, 90_000);
});
