/**
 * MCP servers for the tests, started by the tests: the reference servers `server-everything`
 * (stdio and Streamable HTTP) and `server-memory` (stdio), installed as devDependencies, and a
 * small server of our own whose tool list changes at run time (test/fixtures/mcp).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { stringify as toYaml } from 'yaml';
import { startChild, waitUntilReady, type Child } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';
import { makeApp, type StoreKind, type TestAppOptions } from './app.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

function installed(relative: string): string {
  const path = fileURLToPath(new URL(`../../${relative}`, import.meta.url));
  if (!existsSync(path)) throw new Error(`${relative} is missing: run npm ci (it is a devDependency)`);
  return path;
}

export const EVERYTHING = installed('node_modules/@modelcontextprotocol/server-everything/dist/index.js');
export const MEMORY = installed('node_modules/@modelcontextprotocol/server-memory/dist/index.js');
export const CHANGING = installed('test/fixtures/mcp/changing-server.mjs');

/** An `mcp:` entry for a stdio server run by this Node. */
export function stdioServer(source: string, script: string, extra: Record<string, unknown> = {}, args: string[] = []): Record<string, unknown> {
  return { source, command: process.execPath, args: [script, ...args], ...extra };
}

/** The app with a TOOLS_FILE holding these `mcp:` entries (written as YAML to a temporary folder). */
export function makeMcpApp(kind: StoreKind, mcp: unknown[], options: TestAppOptions = {}): Promise<FastifyInstance> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-mcp-')), 'tools.yaml');
  writeFileSync(file, toYaml({ mcp }));
  return makeApp(kind, { ...options, env: { TOOLS_FILE: file, ...options.env } });
}

/**
 * An MCP server script (`node script ...args`) serving Streamable HTTP on a free port ($PORT); its
 * endpoint is `url`. Any HTTP answer means it listens (a GET without a session may be refused).
 */
export async function startMcpHttp(name: string, script: string, args: string[] = []): Promise<{ url: string; child: Child }> {
  const [port] = await freePorts(1);
  const child = startChild(name, process.execPath, [script, ...args], { cwd: ROOT, env: { ...process.env, PORT: String(port) } });
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitUntilReady(child, 'its HTTP port', async () => (await fetch(url, { signal: AbortSignal.timeout(1000) })).status > 0);
  return { url, child };
}

/** server-everything in Streamable HTTP mode on a free port; its endpoint is `url`. */
export function startEverythingHttp(): Promise<{ url: string; child: Child }> {
  return startMcpHttp('server-everything (Streamable HTTP)', EVERYTHING, ['streamableHttp']);
}

/** The changing server (test/fixtures/mcp) over the SDK's Streamable HTTP server transport, on a free port. */
export function startChangingHttp(): Promise<{ url: string; child: Child }> {
  return startMcpHttp('changing-server (Streamable HTTP)', CHANGING, ['--http']);
}

/** The pids of this process's children whose command line holds `pattern` (a stdio server toolport runs), read from /proc. */
export function childPids(pattern: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      if (parent !== process.pid || state === 'Z') continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(pattern)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

/** Polls until `check` holds (or fails naming `what`). */
export async function eventually(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not reached within ${timeoutMs} ms`);
}
