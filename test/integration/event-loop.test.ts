/**
 * Event-loop protection (docs/operations.md, "Event loop"): when a handler running in process stalls
 * the loop past MAX_EVENT_LOOP_DELAY_MS, new calls answer 503 with Retry-After until it turns again;
 * /healthz stays 200 (the replica is alive), /readyz answers 503, and the lag is a metric.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

describe('event-loop protection (MAX_EVENT_LOOP_DELAY_MS=400)', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp('memory', { env: { MAX_EVENT_LOOP_DELAY_MS: '400' } });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app?.close());

  const invoke = (name: string, args: Record<string, unknown>) =>
    fetch(`${base}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name, arguments: args }) });

  it('refuses new calls with 503 and Retry-After while the loop lags, keeps /healthz at 200, and recovers', async () => {
    // A calm loop first (a loaded machine may lag on its own), then a handler that blocks it for 1.2 s.
    for (let i = 0; i < 50 && (await fetch(`${base}/readyz`)).status !== 200; i++) await sleep(100);
    const blocking = invoke('blocks', { ms: 1200 });
    await sleep(150);
    // Sent while the loop is stalled: read once it turns again, after the lag was measured.
    const [call, mcp, healthz, readyz] = await Promise.all([
      invoke('echo', { text: 'queued' }),
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'queued' } } }),
      }),
      fetch(`${base}/healthz`),
      fetch(`${base}/readyz`),
    ]);
    expect((await (await blocking).json()).success).toBe(true);
    expect(call.status).toBe(503);
    expect(call.headers.get('retry-after')).toBe('2');
    const problem = await call.json();
    expect(problem.type).toBe('urn:toolport:problem:overloaded');
    expect(problem.detail).toMatch(/event loop lags \d+ ms, past MAX_EVENT_LOOP_DELAY_MS \(400\)/);
    expect(mcp.status).toBe(503);
    expect(healthz.status).toBe(200);
    expect(readyz.status).toBe(503);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(Number(/^toolport_event_loop_lag_seconds (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThan(0.4);
    expect(Number(/^toolport_overloaded_total (\S+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(2);
    // Once the loop has turned freely for a window or two, calls are taken again.
    let status = 0;
    for (let i = 0; i < 40 && status !== 200; i++) {
      await sleep(100);
      status = (await invoke('echo', { text: 'later' })).status;
    }
    expect(status).toBe(200);
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
  });
});
