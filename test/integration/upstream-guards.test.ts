/**
 * Breakers and limits per upstream (docs/tool-sources.md): real upstreams in child processes — an
 * HTTP endpoint that fails, flaps or hangs on command, an MCP server over Streamable HTTP whose
 * calls hang, a stdio MCP server that exits at once — counted at the upstream, never mocked.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { stringify as toYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { bearer, testKeys } from '../helpers/keys.ts';
import { eventually, makeMcpApp, startChangingHttp } from '../helpers/mcp-upstreams.ts';
import { startFlakyServer, type FlakyServer } from '../helpers/upstreams.ts';

/** The app with these `http:` entries in its TOOLS_FILE. */
function httpApp(http: Record<string, unknown>[], env: Record<string, string> = {}): Promise<FastifyInstance> {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-guards-')), 'tools.yaml');
  writeFileSync(file, toYaml({ http }));
  return makeApp('memory', { env: { TOOLS_FILE: file, ...env } });
}

const flakyTool = (server: FlakyServer, limits: Record<string, unknown>) => ({
  name: 'flaky',
  description: 'An endpoint that fails on command.',
  parameters: { type: 'object', properties: {} },
  endpoint: { url: `${server.url}/tool` },
  ...limits,
});

const call = (app: FastifyInstance, timeoutMs = 5000, headers: Record<string, string> = {}) =>
  post(app, { name: 'flaky', arguments: {} }, { 'x-timeout-ms': String(timeoutMs), ...headers });

async function guardOf(app: FastifyInstance, source: string, headers: Record<string, string> = {}): Promise<Record<string, any>> {
  const row = ((await get(app, '/sources', headers)).body.sources as Record<string, any>[]).find((s) => s.name === source)!;
  return { ...row, guard: row.guards[0] };
}

afterAll(() => stopAll());

describe('the breaker of an HTTP tool that fails', () => {
  let server: FlakyServer;
  let app: FastifyInstance;
  beforeAll(async () => {
    server = await startFlakyServer();
    app = await httpApp([flakyTool(server, { breaker: { failures: 5, open_s: 1 } })]);
  });
  afterAll(() => app?.close());

  it('opens after 5 failures in a row: calls answer upstream_unavailable at once without reaching it, then one probe closes it', async () => {
    await server.mode('fail');
    for (let i = 0; i < 5; i++) expect((await call(app)).body.error).toMatchObject({ code: 'upstream_unavailable', detail: 'HTTP 503' });
    expect((await server.stats()).calls).toBe(5);
    for (let i = 0; i < 3; i++) {
      const started = performance.now();
      const { body } = await call(app);
      expect(body.duration_ms).toBeLessThanOrEqual(50);
      expect(performance.now() - started).toBeLessThan(1000);
      expect(body.error).toMatchObject({ code: 'upstream_unavailable', retry_after_s: 1, detail: expect.stringMatching(/circuit breaker open/) });
      expect(body.content).toMatch(/failed 5 times in a row.*Retry in about 1 s/);
    }
    expect((await server.stats()).calls).toBe(5);
    const open = await guardOf(app, 'http');
    expect(open).toMatchObject({ state: 'down', breaker: 'open', reason: expect.stringMatching(/circuit breaker open/) });
    expect(open.guard).toMatchObject({ upstream: server.url, breaker: 'open', opened: 1, rejected: { open: 3, busy: 0, rate: 0 } });
    const metrics = (await get(app, '/metrics')).text;
    expect(metrics).toContain(`toolport_upstream_breaker_state{source="http",upstream="${server.url}"} 2`);
    expect(metrics).toContain(`toolport_upstream_rejected_total{source="http",upstream="${server.url}",reason="open"} 3`);

    // After open_s, one call probes; it fails, so the breaker opens again at once.
    await sleep(1100);
    expect((await call(app)).body.error.detail).toBe('HTTP 503');
    expect((await call(app)).body.error.detail).toMatch(/circuit breaker open/);
    expect((await server.stats()).calls).toBe(6);

    await server.mode('ok');
    await sleep(1100);
    expect((await guardOf(app, 'http')).guard.breaker).toBe('half_open');
    expect((await call(app)).body).toMatchObject({ success: true, message: 'answer 7' });
    expect((await call(app)).body).toMatchObject({ success: true, message: 'answer 8' });
    expect((await guardOf(app, 'http')).guard).toMatchObject({ breaker: 'closed', opened: 2, failures_in_row: 0 });
    expect((await get(app, '/metrics')).text).toContain(`toolport_upstream_breaker_state{source="http",upstream="${server.url}"} 0`);
  });

  it('stays closed for an upstream that flaps: only failures in a row count', async () => {
    for (let round = 0; round < 3; round++) {
      await server.mode('fail');
      for (let i = 0; i < 4; i++) expect((await call(app)).body.error.detail).toBe('HTTP 503');
      await server.mode('ok');
      expect((await call(app)).body.success).toBe(true);
    }
    expect((await guardOf(app, 'http')).guard).toMatchObject({ breaker: 'closed', opened: 2 });
  });

  it('counts time-outs as failures: an endpoint that hangs costs five deadlines, then calls answer at once', async () => {
    await server.mode('hang');
    for (let i = 0; i < 5; i++) expect((await call(app, 200)).body.error.code).toBe('deadline_exceeded');
    await eventually('the breaker opened', async () => (await guardOf(app, 'http')).guard.breaker === 'open', 3000);
    const { body } = await call(app, 5000);
    expect(body.error).toMatchObject({ code: 'upstream_unavailable', retry_after_s: 1 });
    expect(body.duration_ms).toBeLessThanOrEqual(50);
    await server.mode('ok');
  });
});

describe('max_concurrency', () => {
  let server: FlakyServer;
  let app: FastifyInstance;
  beforeAll(async () => {
    server = await startFlakyServer();
    app = await httpApp([flakyTool(server, { max_concurrency: 2 })]);
  });
  afterAll(() => app?.close());

  it('never lets more than 2 calls reach the upstream at once; the others wait their turn', async () => {
    await server.mode('ok', 300);
    const answers = await Promise.all(Array.from({ length: 6 }, () => call(app, 10_000)));
    expect(answers.map((a) => a.body.success)).toEqual([true, true, true, true, true, true]);
    expect(await server.stats()).toMatchObject({ calls: 6, max_in_flight: 2 });
  });

  it('answers upstream_busy at the deadline of a call that found no place in time', async () => {
    await server.mode('ok', 3000);
    await server.resetStats();
    const running = Array.from({ length: 4 }, () => call(app, 1000));
    await sleep(300);
    const busy = await guardOf(app, 'http');
    expect(busy.guard).toMatchObject({ in_flight: 2, queued: 2, limits: { max_concurrency: 2 } });
    const codes = (await Promise.all(running)).map((a) => a.body.error?.code).sort();
    expect(codes).toEqual(['deadline_exceeded', 'deadline_exceeded', 'upstream_busy', 'upstream_busy']);
    expect(await server.stats()).toMatchObject({ calls: 2, max_in_flight: 2 });
    expect((await guardOf(app, 'http')).guard.rejected.busy).toBe(2);
  });
});

describe('rate_per_min', () => {
  let server: FlakyServer;
  let app: FastifyInstance;
  let keys: Awaited<ReturnType<typeof testKeys>>;
  beforeAll(async () => {
    server = await startFlakyServer();
    keys = await testKeys(['*']);
    app = await httpApp([flakyTool(server, { rate_per_min: 5, rate_per_min_per_caller: 3 })], { API_KEYS_FILE: keys.file });
  });
  afterAll(() => app?.close());

  it('limits each caller, then all callers together, answering upstream_busy with retry_after_s', async () => {
    const agent = bearer(keys.agent);
    const admin = bearer(keys.admin);
    for (let i = 0; i < 3; i++) expect((await call(app, 5000, agent)).body.success).toBe(true);
    const limited = (await call(app, 5000, agent)).body;
    expect(limited.error).toMatchObject({ code: 'upstream_busy', retry_after_s: expect.any(Number) });
    expect(limited.error.retry_after_s).toBeGreaterThanOrEqual(1);
    expect(limited.error.retry_after_s).toBeLessThanOrEqual(20);
    expect(limited.content).toMatch(/at most 3 calls a minute per caller/);
    // Another caller still has its own share, until the upstream's 5 a minute are spent.
    for (let i = 0; i < 2; i++) expect((await call(app, 5000, admin)).body.success).toBe(true);
    expect((await call(app, 5000, admin)).body.content).toMatch(/at most 5 calls a minute, and that is reached/);
    expect((await server.stats()).calls).toBe(5);
    expect((await guardOf(app, 'http', admin)).guard.rejected.rate).toBe(2);
  });
});

describe('the breaker of an MCP server over Streamable HTTP that hangs', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const { url } = await startChangingHttp();
    app = await makeMcpApp('memory', [{ source: 'remote', url, breaker: { failures: 5, open_s: 1 } }]);
  });
  afterAll(() => app?.close());

  it('opens after 5 calls that hang to their deadline; after open_s one probe closes it', async () => {
    for (let i = 0; i < 5; i++) {
      const { body } = await post(app, { name: 'remote_sleep', arguments: { ms: 10_000, tag: `hang-${i}` } }, { 'x-timeout-ms': '200' });
      expect(body.error.code).toBe('deadline_exceeded');
    }
    await eventually('the breaker opened', async () => (await guardOf(app, 'remote')).guard.breaker === 'open', 3000);
    const started = performance.now();
    const { body } = await post(app, { name: 'remote_greet', arguments: { name: 'Ada' } });
    expect(body.duration_ms).toBeLessThanOrEqual(50);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(body.error).toMatchObject({ code: 'upstream_unavailable', retry_after_s: 1 });
    expect(body.content).toMatch(/MCP server "remote" failed 5 times in a row/);
    expect(await guardOf(app, 'remote')).toMatchObject({ kind: 'mcp', state: 'down', breaker: 'open' });
    await sleep(1100);
    expect((await post(app, { name: 'remote_greet', arguments: { name: 'Ada' } })).body.success).toBe(true);
    expect((await guardOf(app, 'remote')).guard).toMatchObject({ breaker: 'closed', opened: 1 });
  });
});

describe('a stdio MCP server that exits at once', () => {
  it('is restarted with a growing delay (1 s, 2 s, 4 s …), not in a tight loop', async () => {
    const starts = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-restarts-')), 'starts.txt');
    writeFileSync(starts, '');
    const script = `require('node:fs').appendFileSync(${JSON.stringify(starts)}, Date.now() + '\\n'); process.exit(1)`;
    const app = await makeMcpApp('memory', [{ source: 'dying', command: process.execPath, args: ['-e', script] }]);
    try {
      await sleep(7_600);
      const times = readFileSync(starts, 'utf8').trim().split('\n').map(Number);
      const gaps = times.slice(1).map((t, i) => t - times[i]!);
      expect(times.length).toBeGreaterThanOrEqual(3);
      expect(times.length).toBeLessThanOrEqual(5);
      // Each wait is the delay (1 s doubling) plus the time the child took to start and exit.
      gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(1000 * 2 ** i - 50));
      expect(await guardOf(app, 'dying')).toMatchObject({ kind: 'mcp', state: 'down', tools: [] });
      await eventually('GET /sources says when it starts again', async () => /started again in \d+ s/.test((await guardOf(app, 'dying')).reason), 3000);
    } finally {
      await app.close();
    }
  });
});
