/** The real process: `node --import tsx src/server.ts`, as `npm start` runs it. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, it, expect } from 'vitest';
import { until } from '../helpers/tasks.ts';

/** A file the slow_op tool writes when its handler starts: the call is then in flight. */
const slowOpMarks = () => path.join(mkdtempSync(path.join(tmpdir(), 'slow-op-')), 'started');

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXIT_WITHIN_MS = 15_000;

interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

const started: ChildProcess[] = [];

afterEach(() => {
  for (const child of started.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
});

/** Starts the server with only `env` (plus PATH and HOME), so the test runner's environment cannot leak in. */
function startServer(env: Record<string, string>): { child: ChildProcess; exited: Promise<Exit> } {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  started.push(child);
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<Exit>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server still running after ${EXIT_WITHIN_MS} ms; stderr: ${stderr}`)), EXIT_WITHIN_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
  return { child, exited };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

async function waitUntilHealthy(url: string, exited: Promise<Exit>): Promise<Response> {
  let gaveUp = false;
  void exited.then(
    () => (gaveUp = true),
    () => (gaveUp = true),
  );
  const until = Date.now() + EXIT_WITHIN_MS;
  while (!gaveUp && Date.now() < until) {
    try {
      return await fetch(url);
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`${url} never answered`);
}

function lines(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '');
}

describe('server start', () => {
  it('exits with code 1 and one stderr line naming PORT when PORT=abc', async () => {
    const { exited } = startServer({ PORT: 'abc', LOG_LEVEL: 'silent' });
    const exit = await exited;
    expect(exit.code).toBe(1);
    expect(lines(exit.stderr)).toHaveLength(1);
    expect(exit.stderr).toContain('PORT');
    expect(exit.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exits with code 1 and one stderr line naming the module when a plugin does not exist', async () => {
    const { exited } = startServer({ TOOL_PLUGINS: './does-not-exist.ts', LOG_LEVEL: 'silent' });
    const exit = await exited;
    expect(exit.code).toBe(1);
    expect(lines(exit.stderr)).toHaveLength(1);
    expect(exit.stderr).toContain('does-not-exist.ts');
  });

  it('serves the calculator plugin, answers add(2, 3) with a sum of 5, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const { child, exited } = startServer({
      PORT: String(port),
      LOG_LEVEL: 'silent',
      TOOL_PLUGINS: 'examples/plugins/calculator.ts',
    });
    const base = `http://127.0.0.1:${port}`;

    const health = await waitUntilHealthy(`${base}/healthz`, exited);
    expect(health.status).toBe(200);

    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'add', arguments: { a: 2, b: 3 } }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ name: 'add', success: true, value: { sum: 5 }, error: null });

    child.kill('SIGTERM');
    const exit = await exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
  });

  it('on SIGTERM lets a call in flight finish with 200, then exits 0', async () => {
    const port = await freePort();
    const marks = slowOpMarks();
    const { child, exited } = startServer({ PORT: String(port), LOG_LEVEL: 'silent', TOOL_PLUGINS: 'test/unit/fixtures/slow-plugin.ts', SLOW_OP_MARKS: marks });
    const base = `http://127.0.0.1:${port}`;
    await waitUntilHealthy(`${base}/healthz`, exited);
    const call = fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'slow_op', arguments: { ms: 800 } }),
    });
    await until('the call is in flight', () => existsSync(marks));
    child.kill('SIGTERM');
    const response = await call;
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ success: true, value: { waited: 800 } });
    expect(await exited).toMatchObject({ code: 0, signal: null });
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });

  it('exits 1 when calls are still running after SHUTDOWN_GRACE_MS', async () => {
    const port = await freePort();
    const marks = slowOpMarks();
    const { child, exited } = startServer({
      PORT: String(port),
      LOG_LEVEL: 'silent',
      TOOL_PLUGINS: 'test/unit/fixtures/slow-plugin.ts',
      SHUTDOWN_GRACE_MS: '300',
      SLOW_OP_MARKS: marks,
    });
    const base = `http://127.0.0.1:${port}`;
    await waitUntilHealthy(`${base}/healthz`, exited);
    const call = fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'slow_op', arguments: { ms: 5000 } }),
    }).catch((err: unknown) => err);
    await until('the call is in flight', () => existsSync(marks));
    const signalled = Date.now();
    child.kill('SIGTERM');
    expect((await exited).code).toBe(1);
    expect(Date.now() - signalled).toBeLessThan(2000);
    expect(await call).toBeInstanceOf(Error);
  });
});
