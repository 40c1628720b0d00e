/**
 * The `toolport` command as a user runs it (bin/toolport.js in a child process): help and version
 * without serving, `check` listing the catalog without opening a port, and `tools`/`call` against
 * a real service on a port, each failure one line and a non-zero exit.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePorts } from '../../support/ports.ts';
import { makeApp } from '../helpers/app.ts';
import { testKeys, type TestKeys } from '../helpers/keys.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = join(ROOT, 'bin/toolport.js');

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the command with only `env` (plus PATH and HOME). */
function toolport(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
    );
  });
}

const oneLine = (text: string) => {
  expect(text.trim().split('\n')).toHaveLength(1);
  expect(text).not.toMatch(/\n\s+at /);
};

let folder: string;
let app: FastifyInstance;
let url: string;
let keys: TestKeys;
/** A port held by the test: a command that tried to listen on it would fail. */
let held: Server;
let heldPort: number;
/** A port nothing listens on. */
let closedPort: number;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'toolport-cli-'));
  writeFileSync(
    join(folder, 'tools.yaml'),
    'http:\n  - name: weather_now\n    description: Current weather for a city.\n    parameters: {type: object, properties: {city: {type: string}}, required: [city]}\n    endpoint: {url: "http://127.0.0.1:9/now"}\n',
  );
  writeFileSync(
    join(folder, 'shop.yaml'),
    [
      'openapi: 3.0.3',
      "info: {title: shop, version: '1'}",
      'paths:',
      '  /items:',
      '    get: {operationId: listItems, responses: {"200": {description: ok}}}',
      '    post:',
      '      operationId: uploadItem',
      '      requestBody: {required: true, content: {application/octet-stream: {schema: {type: string, format: binary}}}}',
      '      responses: {"200": {description: ok}}',
      '  /items/{id}:',
      '    get:',
      '      operationId: getItem',
      "      parameters: [{name: id, in: path, required: true, schema: {type: string, pattern: '(['}}]",
      '      responses: {"200": {description: ok}}',
      '',
    ].join('\n'),
  );
  writeFileSync(
    join(folder, 'shop-tools.yaml'),
    `openapi:\n  - source: shop\n    spec: ${join(folder, 'shop.yaml')}\n    base_url: http://127.0.0.1:9\ntoolsets:\n  shop:\n    tools: ["shop_*", "nothing_*"]\n`,
  );
  writeFileSync(
    join(folder, 'bad-tools.yaml'),
    [
      'http:',
      '  - {name: Bad Name, description: x, parameters: {type: object}, endpoint: {url: "http://127.0.0.1:9/x"}}',
      '  - {name: fine_one, description: fine, parameters: {type: object}, endpoint: {url: "http://127.0.0.1:9/x"}}',
      '  - {name: no_endpoint, description: y, parameters: {type: object}}',
      'toolsets:',
      '  empty: {tools: []}',
      'policy:',
      '  - action: allow',
      '  - action: maybe',
      '',
    ].join('\n'),
  );
  writeFileSync(join(folder, 'broken.mjs'), 'export default { name: "Bad Name", description: "x", parameters: { type: "object" }, handler() {} };\n');
  keys = await testKeys(['*']);
  app = await makeApp('memory', { env: { API_KEYS_FILE: keys.file } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  heldPort = (held.address() as { port: number }).port;
  [closedPort] = (await freePorts(1)) as [number];
}, 60_000);

afterAll(async () => {
  held?.close();
  await app?.close();
});

describe('toolport --help and --version', () => {
  it('answer and exit 0 without starting the service', async () => {
    const [help, version] = await Promise.all([toolport(['--help'], { PORT: String(heldPort) }), toolport(['--version'])]);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^toolport: executes the tool calls/);
    expect(help.stdout).toContain('toolport call <tool> [key=value …]');
    expect(version).toMatchObject({ code: 0, stdout: '0.1.0\n' });
  }, 60_000);

  it('refuse an unknown command or option with one line and exit 2', async () => {
    const [unknown, option] = await Promise.all([toolport(['frobnicate']), toolport(['call', 'echo', '--frob'])]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('toolport: unknown command "frobnicate" (serve, check, tools, call, approvals, audit) (toolport --help)\n');
    expect(option.code).toBe(2);
    oneLine(option.stderr);
    expect(option.stderr).toContain("'--frob'");
  }, 60_000);
});

describe('toolport check', () => {
  it('lists every tool with its source and hash and exits 0, on a port another process holds (it never listens)', async () => {
    const run = await toolport(['check'], {
      PORT: String(heldPort),
      TOOLS_FILE: join(folder, 'tools.yaml'),
      TOOL_PLUGINS: join(ROOT, 'examples/plugins/calculator.ts'),
    });
    expect(run.stderr).toMatch(/tools, configuration valid\n$/);
    expect(run.code).toBe(0);
    const lines = run.stdout
      .trim()
      .split('\n')
      .map((line) => line.split(/\s+/));
    const byName = new Map(lines.map(([name, source, hash]) => [name, { source, hash }]));
    expect(byName.get('planning_setup_plan')?.source).toBe('builtin');
    expect(byName.get('result_read')?.source).toBe('builtin');
    expect(byName.get('add')?.source).toBe('plugin');
    expect(byName.get('weather_now')?.source).toBe('http');
    for (const { hash } of byName.values()) expect(hash).toMatch(/^[0-9a-f]{64}$/);
  }, 60_000);

  it('with BUILTINS=none lists only your own tools', async () => {
    const run = await toolport(['check'], { BUILTINS: 'none', TOOLS_FILE: join(folder, 'tools.yaml') });
    expect(run.code).toBe(0);
    expect(
      run.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(/\s+/)[0]),
    ).toEqual(['weather_now']);
  }, 60_000);

  it('exits 1 with one line naming the problem: a bad plugin, a bad variable', async () => {
    const [plugin, variable] = await Promise.all([
      toolport(['check'], { TOOL_PLUGINS: join(folder, 'broken.mjs') }),
      toolport(['check'], { BUILTINS: 'planning,everything' }),
    ]);
    expect(plugin.code).toBe(1);
    oneLine(plugin.stderr);
    expect(plugin.stderr).toMatch(/^toolport: .*broken\.mjs.*"Bad Name"/);
    expect(plugin.stdout).toBe('');
    expect(variable.code).toBe(1);
    expect(variable.stderr).toBe(
      'toolport: bad configuration: BUILTINS must be all, none, or a comma-separated list of planning, workspace, introspect, results, search, got "planning,everything"\n',
    );
  }, 60_000);
});

describe('toolport check on a real document and a broken file', () => {
  it("lists each operation an upstream's document offers that is left out, with why, one line each; warnings alone exit 0", async () => {
    const run = await toolport(['check'], { BUILTINS: 'none', TOOLS_FILE: join(folder, 'shop-tools.yaml') });
    expect(run.code).toBe(0);
    expect(run.stdout.trim().split(/\s+/)[0]).toBe('shop_listitems');
    const lines = run.stderr.trim().split('\n');
    expect(lines).toContain('toolport: left out: shop operation uploadItem: its request body is application/octet-stream, not JSON');
    expect(lines).toContain('toolport: left out: shop operation getItem: parameters schema does not compile: pattern "([" is not a regular expression');
    expect(lines).toContain('toolport: warning: toolset "shop": tools glob "nothing_*" matches no tool');
    expect(lines.at(-1)).toBe('toolport: 1 tools, 2 left out of the catalog, 1 warning, configuration valid');
  }, 60_000);

  it('reports every problem of a tools file, one line each, and exits 1', async () => {
    const run = await toolport(['check'], { BUILTINS: 'none', TOOLS_FILE: join(folder, 'bad-tools.yaml') });
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    const lines = run.stderr.trim().split('\n');
    expect(lines.filter((l) => /http\[0\].*"Bad Name"/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /http\[2\] "no_endpoint": endpoint/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /toolsets\.empty\.tools must be/.test(l))).toHaveLength(1);
    expect(lines.filter((l) => /policy\[1\]: action must be one of/.test(l))).toHaveLength(1);
    expect(lines.some((l) => /fine_one/.test(l))).toBe(false);
    expect(lines.at(-1)).toBe('toolport: 4 problems, the service would not start');
    expect(run.stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});

describe('toolport tools and call, against a running service', () => {
  const env = () => ({ TOOLPORT_URL: url, TOOLPORT_API_KEY: keys.admin });

  it('lists the tools, and renders them for a provider with --format', async () => {
    const [plain, openai] = await Promise.all([toolport(['tools'], env()), toolport(['tools', '--format', 'openai'], env())]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/^echo\s+Echo the text back\.$/m);
    expect(openai.code).toBe(0);
    expect(JSON.parse(openai.stdout).tools.some((t: { type: string; function: { name: string } }) => t.type === 'function' && t.function.name === 'echo')).toBe(
      true,
    );
  }, 60_000);

  it('calls a tool with key=value arguments (JSON values typed, the rest strings) or --json, printing the content', async () => {
    const [pairs, json] = await Promise.all([
      toolport(['call', 'echo', 'text=hello world', 'n=3'], env()),
      toolport(['call', 'echo', '--json', '{"text":"42"}'], env()),
    ]);
    expect(pairs).toMatchObject({ code: 0, stderr: '' });
    expect(pairs.stdout).toBe('echoed\n\n{"text":"hello world"}\n');
    expect(json.stdout).toBe('echoed\n\n{"text":"42"}\n');
  }, 60_000);

  it('exits 1 with the message on a tool-level failure, a refused key or no service', async () => {
    const [failed, invalid, refused, down] = await Promise.all([
      toolport(['call', 'fails'], env()),
      toolport(['call', 'echo', 'text=7'], env()),
      toolport(['call', 'echo', 'text=x'], { TOOLPORT_URL: url, TOOLPORT_API_KEY: 'sk-wrong' }),
      toolport(['call', 'echo', 'text=x'], { TOOLPORT_URL: `http://127.0.0.1:${closedPort}` }),
    ]);
    expect(failed).toMatchObject({ code: 1, stdout: '' });
    expect(failed.stderr).toMatch(/^toolport: fails failed( \([a-z_]+\))?: Nothing found: try another query\.\n$/);
    // text=7 is the number 7, which the schema refuses: the value really was typed.
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toMatch(/^toolport: echo failed \(invalid_arguments\)/);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^toolport: the key was refused \(401\)/);
    oneLine(refused.stderr);
    expect(down.code).toBe(1);
    oneLine(down.stderr);
    expect(down.stderr).toContain(`cannot reach toolport at http://127.0.0.1:${closedPort}`);
  }, 60_000);
});
