/** A store outage is one log line without a stack (and one when it ends), however many requests it fails. */
import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.ts';
import { makeApp, post, waitUntilReady } from '../helpers/app.ts';

describe('logs of a store outage', () => {
  let redis: RedisServer;
  let app: FastifyInstance;
  const lines: Record<string, unknown>[] = [];
  beforeAll(async () => {
    redis = await RedisServer.start();
    const logger = pino({ level: 'info' }, new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk))), done()) }));
    app = await makeApp('redis', { redisUrl: redis.url, logger });
  });
  afterAll(async () => {
    await app.close();
    await redis.stop();
  });

  const failSessionCalls = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const { status } = await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': `outage-${i}` });
      expect(status).toBe(503);
      expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    }
  };

  it('logs one warning without a stack per outage, and one line when the store is back', async () => {
    expect((await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'before' })).status).toBe(200);
    lines.length = 0;

    await redis.stop();
    await sleep(100);
    await failSessionCalls(20);
    const warnings = lines.filter((line) => (line.level as number) >= 40);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, msg: expect.stringContaining('redis is unreachable') });
    expect(JSON.stringify(lines)).not.toMatch(/"stack"|\n\s+at /);

    await redis.restart();
    await waitUntilReady(app);
    expect((await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'after' })).status).toBe(200);
    expect(lines.filter((line) => line.msg === 'redis is reachable again')).toHaveLength(1);

    // A second outage is a second incident: one more line.
    await redis.stop();
    await sleep(100);
    await failSessionCalls(5);
    expect(lines.filter((line) => (line.level as number) >= 40)).toHaveLength(2);
  }, 30_000);
});
