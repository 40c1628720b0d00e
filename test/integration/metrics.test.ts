/** GET /metrics: Prometheus text with per-tool call counters, durations, conflicts, store errors, process metrics. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { registerLedgerTools } from '../helpers/ledger-tools.ts';

/** The value of one series, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory', { register: registerLedgerTools });
  });
  afterAll(() => app.close());

  it('counts ledger lookups: a miss, then hits', async () => {
    for (let i = 0; i < 3; i++) await post(app, { name: 'charge_global', arguments: { tag: 'metrics' } });
    const text = (await get(app, '/metrics')).text;
    expect(sample(text, 'toolport_ledger_lookups_total{result="miss"}')).toBe(1);
    expect(sample(text, 'toolport_ledger_lookups_total{result="hit"}')).toBe(2);
  });

  it('counts calls by tool and outcome, and times them', async () => {
    await post(app, { name: 'echo', arguments: { text: 'a' } });
    await post(app, { name: 'echo', arguments: { text: 'b' } });
    await post(app, { name: 'echo', arguments: { nope: 1 } });
    await post(app, { name: 'made_up_tool_1', arguments: {} });
    await post(app, { name: 'made_up_tool_2', arguments: {} });
    const response = await get(app, '/metrics');
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain/);
    const text = response.text;
    expect(sample(text, 'toolport_tool_calls_total{tool="echo",outcome="success"}')).toBe(2);
    expect(sample(text, 'toolport_tool_calls_total{tool="echo",outcome="invalid_arguments"}')).toBe(1);
    // Names a model invents share one series.
    expect(sample(text, 'toolport_tool_calls_total{tool="(unknown)",outcome="unknown_tool"}')).toBe(2);
    expect(text).not.toContain('made_up_tool');
    expect(sample(text, 'toolport_tool_call_duration_seconds_count{tool="echo"}')).toBe(3);
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
  });

  it('counts session commit conflicts', async () => {
    await post(app, { name: 'conflicts', arguments: {} }, { 'x-session-id': 'metrics-conflicts' });
    expect(sample((await get(app, '/metrics')).text, 'toolport_session_commit_conflicts_total{tool="conflicts"}')).toBe(31);
  });
});

describe('metrics of store errors', () => {
  it('counts requests answered 503 because Redis is down', async () => {
    const redis = await RedisServer.start();
    const app = await makeApp('redis', { redisUrl: redis.url });
    try {
      await redis.stop();
      for (let i = 0; i < 3 && (await get(app, '/readyz')).status !== 503; i++) await new Promise((r) => setTimeout(r, 100));
      expect((await post(app, { name: 'echo', arguments: { text: 'x' } }, { 'x-session-id': 's' })).status).toBe(503);
      const before = sample((await get(app, '/metrics')).text, 'toolport_store_errors_total')!;
      expect(before).toBeGreaterThanOrEqual(1);
      // /mcp answers a store outage with its own JSON-RPC error body: counted all the same.
      const mcp = await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': '2025-11-25',
          'x-session-id': 's',
        },
        payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } }),
      });
      expect(mcp.statusCode).toBe(503);
      expect(sample((await get(app, '/metrics')).text, 'toolport_store_errors_total')).toBe(before + 1);
    } finally {
      await app.close();
      await redis.stop();
    }
  });
});
