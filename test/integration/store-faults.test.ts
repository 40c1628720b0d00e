/**
 * Redis failing under a running service: answers 503 fast instead of hanging, and recovers by
 * itself when Redis returns. Each test owns its redis-server, so stopping it harms nobody.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.ts';
import { makeApp, post } from '../helpers/app.ts';

async function timed<T>(work: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await work();
  return { result, ms: performance.now() - started };
}

async function waitUntilReady(app: FastifyInstance, timeoutMs = 8000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200) return;
    await sleep(100);
  }
  throw new Error('the service did not become ready again');
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
});
