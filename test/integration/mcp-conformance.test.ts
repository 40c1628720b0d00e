/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance) against toolport's /mcp:
 * every server scenario the installed release lists, pending ones included, run by its own CLI
 * against the real listening server with the fixtures of test/fixtures/conformance-plugin.ts. A
 * scenario may fail only when test/mcp-conformance-expected-failures.json names it with a reason.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const FIXTURES = join(ROOT, 'test/fixtures/conformance-plugin.ts');
const EXPECTED: Record<string, string> = JSON.parse(readFileSync(join(ROOT, 'test/mcp-conformance-expected-failures.json'), 'utf8'));

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | string;
  errorMessage?: string;
}

/** The server scenarios the installed suite lists. */
async function serverScenarios(): Promise<string[]> {
  const { stdout } = await run(process.execPath, [CLI, 'list', '--server'], { timeout: 60_000 });
  return [...stdout.matchAll(/^\s+- (\S+) \[/gm)].map((m) => m[1]!);
}

describe('the official MCP conformance suite against /mcp', () => {
  let app: FastifyInstance;
  let out: string;
  let scenarios: string[];
  /** Each scenario's checks, as the suite wrote them. */
  const results = new Map<string, Check[]>();

  beforeAll(async () => {
    app = await makeApp('redis', { env: { TOOL_PLUGINS: FIXTURES } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    out = mkdtempSync(join(tmpdir(), 'toolport-conformance-'));
    scenarios = await serverScenarios();
    // The CLI exits non-zero when a scenario fails: the checks it wrote say which.
    await run(process.execPath, [CLI, 'server', '--url', `http://127.0.0.1:${port}/mcp`, '--suite', 'all', '-o', out], { timeout: 180_000 }).catch(
      (err: { stdout?: string }) => err,
    );
    for (const folder of readdirSync(out)) {
      const scenario = scenarios.find(
        (name) => folder.startsWith(`server-${name.replaceAll('/', '-')}-`) && /^-\d{4}-\d\d-\d\dT/.test(folder.slice(7 + name.length)),
      );
      if (scenario !== undefined) results.set(scenario, JSON.parse(readFileSync(join(out, folder, 'checks.json'), 'utf8')) as Check[]);
    }
  }, 240_000);

  afterAll(async () => {
    await app?.close();
    if (out !== undefined) rmSync(out, { recursive: true, force: true });
  });

  it('runs every server scenario of the installed release', () => {
    expect(scenarios.length).toBeGreaterThanOrEqual(32);
    expect([...results.keys()].sort()).toEqual([...scenarios].sort());
    for (const name of Object.keys(EXPECTED)) expect(scenarios, `the expected failure ${name} is a scenario`).toContain(name);
    for (const [name, reason] of Object.entries(EXPECTED)) expect(reason.length, `the reason given for ${name}`).toBeGreaterThan(20);
  });

  it('passes every scenario that is not listed as an expected failure', () => {
    const failed: Record<string, string[]> = {};
    let passed = 0;
    for (const [scenario, checks] of results) {
      const failures = checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING').map((c) => `${c.id}: ${c.errorMessage ?? c.status}`);
      if (failures.length === 0) passed++;
      else if (EXPECTED[scenario] === undefined) failed[scenario] = failures;
    }
    expect(failed).toEqual({});
    expect(passed).toBeGreaterThanOrEqual(scenarios.length - Object.keys(EXPECTED).length);
  });
});
