/**
 * Redis failing under a running service: answers 503 fast instead of hanging, and recovers by
 * itself when Redis returns. Each test owns its redis-server, so stopping it harms nobody.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.ts';
import { makeApp, post, waitUntilReady } from '../helpers/app.ts';

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

describe('Redis outages', () => {
  let redis: RedisServer;
  let app: FastifyInstance;
  beforeEach(async () => {
    redis = await RedisServer.start();
    app = await makeApp('redis', { redisUrl: redis.url });
  });
  afterEach(async () => {
    await app.close();
    await redis.stop();
  });

  it('answers 503 within 1.5 s while Redis is stopped, and works again without a restart', async () => {
    expect((await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'outage' })).body.value).toEqual({ count: 1 });
    await redis.stop();
    await sleep(100);

    const ready = await timed(() => app.inject({ method: 'GET', url: '/readyz' }));
    expect(ready.result.statusCode).toBe(503);
    expect(ready.result.headers['content-type']).toMatch(/problem\+json/);
    expect(ready.ms).toBeLessThan(1500);

    const call = await timed(() => post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'outage' }));
    expect(call.result.status).toBe(503);
    expect(call.result.body.type).toContain('store-unavailable');
    expect(call.ms).toBeLessThan(1500);

    // A call that touches no state does not need the store.
    expect((await post(app, { name: 'echo', arguments: { text: 'a' } })).status).toBe(200);

    await redis.restart();
    await waitUntilReady(app);
    const after = await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'outage-2' });
    expect(after.status).toBe(200);
    expect(after.body.value).toEqual({ count: 1 });
  });

  it('answers 503 within 1.5 s while Redis is paused (SIGSTOP), then recovers', async () => {
    await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'paused' });
    redis.pause();
    try {
      const ready = await timed(() => app.inject({ method: 'GET', url: '/readyz' }));
      expect(ready.result.statusCode).toBe(503);
      expect(ready.ms).toBeLessThan(1500);
      const call = await timed(() => post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'paused' }));
      expect(call.result.status).toBe(503);
      expect(call.ms).toBeLessThan(1500);
    } finally {
      redis.resume();
    }
    await waitUntilReady(app);
    expect((await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'paused' })).body.value).toEqual({ count: 2 });
  });

  it('ends a call by its deadline while Redis is paused mid-call, without waiting for the store', async () => {
    const session = { 'x-session-id': 'paused-mid-call', 'x-timeout-ms': '300' };
    const call = timed(() => post(app, { name: 'slow', arguments: { ms: 2000 } }, session));
    await sleep(100);
    redis.pause();
    try {
      const { result, ms } = await call;
      expect(result.status).toBe(200);
      expect(result.body.error.code).toBe('deadline_exceeded');
      expect(ms).toBeLessThan(600);
    } finally {
      redis.resume();
    }
    await waitUntilReady(app);
  });

  it('applies a session commit cut off by a paused Redis either fully or not at all', async () => {
    const headers = { 'x-session-id': 'interrupted', 'x-timeout-ms': '5000' };
    await post(app, { name: 'writes_many', arguments: { n: 5, value: 'before' } }, headers);
    const call = post(app, { name: 'writes_many', arguments: { n: 5, wait_ms: 200, value: 'after' } }, headers);
    await sleep(100);
    redis.pause();
    const answer = await call; // the commit reaches a frozen Redis: 503 after the command timeout
    redis.resume();
    await waitUntilReady(app);
    const values = (await app.toolport.store.sessionRead('interrupted', ['k0', 'k1', 'k2', 'k3', 'k4'])).values;
    expect(new Set(values).size, `answer ${answer.status}: ${JSON.stringify(values)}`).toBe(1);
    expect(['"before"', '"after"']).toContain(values[0]);
    if (answer.status === 200) expect(values[0]).toBe('"after"');
    else expect(answer.status).toBe(503);
  });
});
