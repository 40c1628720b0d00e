/**
 * MCP servers that are slow, cancelled, killed or never start (docs/mcp-sources.md, docs/formats.md): a cancel and a
 * deadline reach the server as notifications/cancelled; a stdio server killed mid-call answers
 * upstream_unavailable, is named by /readyz, and is restarted and serving again.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { get, post } from '../helpers/app.ts';
import { CHANGING, childPids, eventually, makeMcpApp, stdioServer } from '../helpers/mcp-upstreams.ts';

async function cancelledTags(app: FastifyInstance): Promise<string[]> {
  const { body } = await post(app, { name: 'own_cancellations', arguments: {} });
  return (body.value.cancelled as { tag: string }[]).map((c) => c.tag);
}

describe('cancellation and deadlines reach the MCP server', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeMcpApp('memory', [stdioServer('own', CHANGING)]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app?.close());

  it('a call out of time answers deadline_exceeded at once and the server is told to stop', async () => {
    const started = Date.now();
    const { body } = await post(app, { name: 'own_sleep', arguments: { ms: 10_000, tag: 'deadline-1' } }, { 'x-timeout-ms': '300' });
    expect(body.error.code).toBe('deadline_exceeded');
    expect(Date.now() - started).toBeLessThan(3000);
    await eventually('the server saw the cancellation', async () => (await cancelledTags(app)).includes('deadline-1'));
  });

  it('an MCP notifications/cancelled sent to toolport is forwarded to the server', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-session-id': 'cancel-upstream' };
    const call = { jsonrpc: '2.0', id: 'up-1', method: 'tools/call', params: { name: 'own_sleep', arguments: { ms: 10_000, tag: 'mcp-cancel-1' } } };
    const running = fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(call) });
    await sleep(300);
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'up-1', reason: 'the user pressed stop' } };
    expect((await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(cancel) })).status).toBe(202);
    const answer = (await (await running).json()) as { result: { isError: boolean } };
    expect(answer.result.isError).toBe(true);
    await eventually('the server saw the cancellation', async () => (await cancelledTags(app)).includes('mcp-cancel-1'));
  });
});

describe('a caller that goes away', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeMcpApp('memory', [stdioServer('own', CHANGING)]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app?.close());

  it('cancels the upstream call too', async () => {
    const controller = new AbortController();
    const running = fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'own_sleep', arguments: { ms: 10_000, tag: 'gone-1' } }),
      signal: controller.signal,
    }).catch(() => null);
    await sleep(300);
    controller.abort();
    await running;
    await eventually('the server saw the cancellation', async () => (await cancelledTags(app)).includes('gone-1'));
  });
});

describe('a stdio server killed mid-call', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeMcpApp('memory', [stdioServer('own', CHANGING, {}, ['--label=killed-mid-call'])]);
  });
  afterAll(() => app?.close());

  it('answers upstream_unavailable, is named by /readyz, then is restarted and serves again', async () => {
    const [pid] = childPids('killed-mid-call');
    expect(pid, 'the server runs as a child process').toBeGreaterThan(0);
    const running = post(app, { name: 'own_sleep', arguments: { ms: 10_000, tag: 'killed' } });
    await sleep(300);
    process.kill(pid!, 'SIGKILL');
    const { body } = await running;
    expect(body).toMatchObject({ success: false, error: { code: 'upstream_unavailable' } });
    expect(body.content).toMatch(/not answering.*Retrying in a little while may help/);
    const ready = await get(app, '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.upstreams_down).toEqual([{ source: 'own', reason: expect.any(String) }]);
    const whileDown = await post(app, { name: 'own_greet', arguments: { name: 'Ada' } });
    expect(whileDown.body.error.code).toBe('upstream_unavailable');
    const sourceOf = async () => ((await get(app, '/sources')).body.sources as Record<string, any>[]).find((s) => s.name === 'own');
    expect(await sourceOf()).toMatchObject({ kind: 'mcp', state: 'down', reason: expect.any(String), last_error: { code: 'upstream_unavailable' } });
    await eventually('a new child serves the tools', async () => (await post(app, { name: 'own_greet', arguments: { name: 'Ada' } })).body.success === true);
    expect(childPids('killed-mid-call')).toHaveLength(1);
    expect(childPids('killed-mid-call')[0]).not.toBe(pid);
    expect((await get(app, '/readyz')).body.upstreams_down).toBeUndefined();
    // Serving again, its recent failures still counted; the last error stays named.
    expect(await sourceOf()).toMatchObject({ state: 'degraded', reason: null, last_error: { code: 'upstream_unavailable' } });
  });

  it('is ended when the service closes', async () => {
    const other = await makeMcpApp('memory', [stdioServer('own', CHANGING, {}, ['--label=ends-with-service'])]);
    expect(childPids('ends-with-service')).toHaveLength(1);
    await other.close();
    await eventually('the child is gone', () => childPids('ends-with-service').length === 0, 5000);
  });
});

describe('a server that does not start', () => {
  const broken = { source: 'broken', command: process.execPath, args: ['-e', 'process.stderr.write("no luck\\n"); process.exit(3)'] };

  it('leaves the service up and ready, naming it in /readyz', async () => {
    const app = await makeMcpApp('memory', [broken, stdioServer('own', CHANGING)]);
    try {
      const ready = await get(app, '/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body.upstreams_down.map((d: { source: string }) => d.source)).toEqual(['broken']);
      const sources = (await get(app, '/sources')).body.sources as Record<string, any>[];
      expect(sources.find((s) => s.name === 'broken')).toMatchObject({ kind: 'mcp', tools: [], state: 'down', reason: expect.any(String) });
      expect((await post(app, { name: 'own_greet', arguments: { name: 'Bo' } })).body.success).toBe(true);
    } finally {
      await app.close();
    }
  });

  it('makes the replica unready with READY_REQUIRES_UPSTREAMS=true', async () => {
    const app = await makeMcpApp('memory', [broken], { env: { READY_REQUIRES_UPSTREAMS: 'true' } });
    try {
      const ready = await get(app, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.detail).toMatch(/broken/);
    } finally {
      await app.close();
    }
  });
});
