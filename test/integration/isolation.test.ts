/**
 * Isolated handlers (docs/plugins.md, "Isolated handlers"): plugin tools run in a real piscina
 * pool of worker threads. A handler that spins, leaks or exits ends only its own call; the
 * replica, /healthz and the other tools carry on, and the pool replaces the worker.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post } from '../helpers/app.ts';
import { bearer } from '../helpers/keys.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';
import { collectLogs, type CollectedLogs } from '../helpers/secrets-scan.ts';

const PLUGIN = fileURLToPath(new URL('../fixtures/isolation/tools.ts', import.meta.url));
const POOL_SIZE = 2;
const MAX_OLD_GENERATION_MB = 64;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

describe('isolated handlers (TOOL_ISOLATION=worker)', () => {
  let app: FastifyInstance;
  let base: string;

  beforeAll(async () => {
    app = await makeApp('memory', {
      env: { TOOL_PLUGINS: PLUGIN, TOOL_ISOLATION: 'worker', WORKER_POOL_SIZE: String(POOL_SIZE), WORKER_MAX_OLD_GENERATION_MB: String(MAX_OLD_GENERATION_MB) },
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    // The pool is started with the app; a first call shows its workers are up.
    expect((await post(app, { name: 'iso_echo', arguments: { text: 'warm' } })).body.success).toBe(true);
  });
  afterAll(() => app?.close());

  const call = async (name: string, args: Record<string, unknown> = {}, timeoutMs?: number) => {
    const started = performance.now();
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(timeoutMs !== undefined && { 'x-timeout-ms': String(timeoutMs) }) },
      body: JSON.stringify({ name, arguments: args }),
    });
    return { body: (await response.json()) as Record<string, any>, ms: performance.now() - started };
  };

  it('runs the handler in a worker thread, with its own failures answered as in process', async () => {
    const echoed = await call('iso_echo', { text: 'hi' });
    expect(echoed.body).toMatchObject({ success: true, message: 'hi', value: { text: 'hi' } });
    expect(echoed.body.value.threadId).toBeGreaterThan(0);
    // A tool of the same plugin that says isolation: 'none' runs in the main thread.
    expect((await call('counted_runs')).body.value.threadId).toBe(0);
    expect((await call('iso_throws')).body.error).toEqual({ code: 'handler_error', detail: 'the isolated handler refused' });
  });

  /** /healthz probed back to back until `until` (performance.now()); each answer's time in ms. */
  const probeHealthz = async (until: number): Promise<number[]> => {
    const times: number[] = [];
    while (performance.now() < until) {
      const started = performance.now();
      const response = await fetch(`${base}/healthz`);
      await response.arrayBuffer();
      expect(response.status).toBe(200);
      times.push(performance.now() - started);
    }
    return times;
  };

  it('4 handlers spinning while (true): /healthz p99 ≤ 50 ms, other calls succeed, each spinner answers deadline_exceeded on time, the pool is whole after', async () => {
    const deadlineMs = 2000;
    const threadsBefore = app.toolport.workers.threads;
    // The same probe without spinners first: what this machine's own load does to /healthz now.
    const quiet = await probeHealthz(performance.now() + 1000);
    const spinners = Array.from({ length: 4 }, () => call('iso_spin', {}, deadlineMs));
    const until = performance.now() + deadlineMs - 100;
    const others = (async () => {
      const answers: boolean[] = [];
      while (performance.now() < until) {
        answers.push((await call('echo', { text: 'meanwhile' })).body.success === true);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return answers;
    })();
    const [answers, spinning, meanwhile] = await Promise.all([Promise.all(spinners), probeHealthz(until), others]);
    for (const { body, ms } of answers) {
      expect(body.error.code).toBe('deadline_exceeded');
      expect(ms).toBeLessThanOrEqual(deadlineMs * 1.2);
    }
    const [p50, p99, quietP99] = [percentile(spinning, 50), percentile(spinning, 99), percentile(quiet, 99)];
    console.log(
      `/healthz under 4 spinning handlers: ${spinning.length} requests, p50 ${p50.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (without them: p99 ${quietP99.toFixed(1)} ms)`,
    );
    expect(spinning.length).toBeGreaterThan(50);
    // 50 ms, unless the machine's own load already takes /healthz past it without any spinner.
    expect(p99).toBeLessThanOrEqual(Math.max(50, quietP99 + 20));
    expect(meanwhile.length).toBeGreaterThan(5);
    expect(meanwhile.every(Boolean)).toBe(true);
    // Whole again: as many workers as before, and they take calls.
    expect(app.toolport.workers.threads).toBe(threadsBefore);
    const after = await Promise.all(Array.from({ length: POOL_SIZE * 2 }, (_, i) => call('iso_echo', { text: `after ${i}` })));
    expect(after.every(({ body }) => body.success === true)).toBe(true);
  });

  it('a handler that allocates without end answers tool_crashed (out of memory), and the memory comes back', async () => {
    const rssBefore = process.memoryUsage().rss;
    const { body } = await call('iso_alloc', {}, 20_000);
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('tool_crashed');
    expect(body.error.detail).toMatch(/out of memory/);
    expect(body.message).toMatch(/crashed/);
    let rssAfter = process.memoryUsage().rss;
    for (let i = 0; i < 50 && rssAfter > rssBefore + 48 * 1024 * 1024; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rssAfter = process.memoryUsage().rss;
    }
    console.log(`RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MB, after the worker's OOM ${(rssAfter / 2 ** 20).toFixed(0)} MB`);
    expect(rssAfter).toBeLessThanOrEqual(rssBefore + 48 * 1024 * 1024);
    expect((await call('iso_echo', { text: 'still here' })).body.success).toBe(true);
  });

  it('process.exit(1) in a handler answers tool_crashed; the replica still serves', async () => {
    const { body } = await call('iso_exit');
    expect(body.error).toEqual({ code: 'tool_crashed', detail: 'its worker exited with code 1' });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await call('echo', { text: 'in process' })).body.success).toBe(true);
    expect((await call('iso_echo', { text: 'isolated' })).body.success).toBe(true);
  });

  it('an error thrown outside the handler (from a timer) answers tool_crashed', async () => {
    const { body } = await call('iso_throw_outside', {}, 10_000);
    expect(body.error.code).toBe('tool_crashed');
    expect(body.error.detail).toMatch(/thrown from a timer/);
    expect((await call('iso_echo', { text: 'next' })).body.success).toBe(true);
  });
});

describe('isolation chosen by the definition', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const registering = fileURLToPath(new URL('../fixtures/isolation/registering.ts', import.meta.url));
    app = await makeApp('memory', { env: { TOOL_PLUGINS: registering, WORKER_POOL_SIZE: '1' } });
  });
  afterAll(() => app?.close());

  it("runs only the tool that says isolation: 'worker' in a worker, with its module's own resources", async () => {
    const isolated = await post(app, { name: 'own_worker', arguments: {} });
    expect(isolated.body).toMatchObject({ success: true, message: 'hello from the plugin' });
    expect(isolated.body.value.threadId).toBeGreaterThan(0);
    expect((await post(app, { name: 'stays_home', arguments: {} })).body.value.threadId).toBe(0);
  });

  it('refuses an isolation that is not none or worker, at start', async () => {
    const bad = fileURLToPath(new URL('../fixtures/isolation/bad.ts', import.meta.url));
    await expect(makeApp('memory', { env: { TOOL_PLUGINS: bad } })).rejects.toThrow(/tool "bad_isolation": isolation must be 'none' or 'worker'/);
  });
});

describe("an isolated tool's whole context", () => {
  const PUBLIC_URL = 'http://toolport.test';
  let issuer: TestIssuer;
  let app: FastifyInstance;
  let token: string;
  let logs: CollectedLogs;

  beforeAll(async () => {
    issuer = await startIssuer();
    logs = collectLogs();
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-isolation-'));
    const toolsFile = path.join(dir, 'tools.json');
    // Per plugin, in the tools file: its tools run in workers without TOOL_ISOLATION.
    await writeFile(toolsFile, JSON.stringify({ credentials: { weather_key: { type: 'secret' } }, plugins: [{ module: PLUGIN, isolation: 'worker' }] }));
    app = await makeApp('memory', {
      env: { TOOLS_FILE: toolsFile, AUTH_ISSUER: issuer.issuer, PUBLIC_URL, SECRETS_KEY: randomBytes(32).toString('hex'), WORKER_POOL_SIZE: '1' },
      logger: logs.logger,
    });
    token = await issuer.sign({ sub: 'alice', aud: `${PUBLIC_URL}/mcp` });
  });
  afterAll(async () => {
    await app?.close();
    await issuer?.close();
  });

  it('progress over SSE, a nested invoke that meets the ledger, session writes committed, context.user and a credential', async () => {
    const headers = { ...bearer(token), 'content-type': 'application/json', accept: 'text/event-stream', 'x-session-id': 'iso-session-1' };
    const run = async () => {
      const response = await app.inject({ method: 'POST', url: '/tools/invoke', headers, payload: { id: 'c1', name: 'iso_context', arguments: {} } });
      expect(response.headers['content-type']).toBe('text/event-stream');
      const events = response.body
        .split('\n\n')
        .filter((block) => block.trim() !== '')
        .map((block) => ({ event: /^event: (.*)$/m.exec(block)![1], data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) }));
      return { progress: events.filter((e) => e.event === 'progress').map((e) => e.data), result: events.at(-1)!.data };
    };
    // Without the credential the handler's credentials.get throws across the boundary: the call answers with the link.
    const missing = await run();
    expect(missing.result.error.code).toBe('authorization_required');
    expect(missing.result.authorization.credential).toBe('weather_key');
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/weather_key',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: { value: 'alice-secret-123' },
    });
    expect(put.statusCode).toBe(204);

    const first = await run();
    expect(first.progress.length).toBeGreaterThanOrEqual(1);
    expect(first.progress.every((p: { call_id: string; total: number }) => p.call_id === 'c1' && p.total === 3)).toBe(true);
    expect(first.progress.at(-1).done).toBe(3);
    expect(first.result).toMatchObject({ id: 'c1', success: true });
    const value = first.result.value;
    expect(value).toMatchObject({ visits: 1, user: 'alice', secretLength: 'alice-secret-123'.length, session: 'iso-session-1', signalAborted: false });
    expect(value.threadId).toBeGreaterThan(0);
    // Both nested calls were one run: the second replayed the ledger's record.
    expect(value.nested).toEqual([
      { item: 'x', run: 1 },
      { item: 'x', run: 1 },
    ]);
    const second = await run();
    expect(second.result.value.visits).toBe(2);
    const runs = await app.inject({
      method: 'POST',
      url: '/tools/invoke',
      headers: { ...bearer(token), 'content-type': 'application/json' },
      payload: { name: 'counted_runs', arguments: {} },
    });
    expect(runs.json().value.runs).toBe(1);
    // The worker's log line, through the call's own logger.
    const line = logs.lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'isolated handler started');
    expect(line).toMatchObject({ level: 30, step: 'started', callId: 'c1', tool: 'iso_context', session: 'iso-session-1' });
  });
});
