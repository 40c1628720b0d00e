/**
 * The ledger when Redis misbehaves between a call's begin and its complete: the effect runs once,
 * and no entry stays stuck in progress once the lease is over.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RedisServer } from '../../support/redis-server.ts';
import { makeApp, post, waitUntilReady } from '../helpers/app.ts';
import { registerLedgerTools, runsOf, started } from '../helpers/ledger-tools.ts';

describe('ledger under Redis faults', () => {
  let redis: RedisServer;
  let app: FastifyInstance;
  beforeEach(async () => {
    redis = await RedisServer.start();
    app = await makeApp('redis', { redisUrl: redis.url, register: registerLedgerTools, env: { LEDGER_LEASE_MS: '1000' } });
  });
  afterEach(async () => {
    await app.close();
    await redis.stop();
  });

  it('runs once when the connection is dropped while the handler runs', async () => {
    const tag = `dropped-${randomUUID()}`;
    const call = post(app, { name: 'charge_global', arguments: { tag, ms: 300 } });
    await started(tag);
    const admin = new Redis(redis.url);
    try {
      expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'normal'))).toBeGreaterThan(0);
    } finally {
      admin.disconnect();
    }
    const first = await call;
    expect(first.body).toMatchObject({ success: true, replayed: false });
    await waitUntilReady(app);
    const again = await post(app, { name: 'charge_global', arguments: { tag, ms: 300 } });
    expect(again.body).toMatchObject({ success: true, replayed: true, effect_id: first.body.effect_id });
    expect(runsOf(tag)).toBe(1);
  });

  it('runs once when Redis freezes as the result is recorded, and leaves no entry stuck', async () => {
    const tag = `frozen-${randomUUID()}`;
    const call = post(app, { name: 'charge_global', arguments: { tag, ms: 300 } }, { 'x-timeout-ms': '10000' });
    await started(tag);
    await sleep(100);
    redis.pause(); // the handler ends while Redis is frozen: the record waits in the socket
    const first = await call;
    redis.resume();
    // The handler's effect happened: its caller is told so (not a 503), whatever the store did.
    expect(first.status).toBe(200);
    expect(first.body.success).toBe(true);
    await waitUntilReady(app);
    await sleep(1100); // past the lease, in case the record was not written
    const again = await post(app, { name: 'charge_global', arguments: { tag, ms: 300 } });
    // Not stuck in progress, and not run twice: the record sent into the frozen socket landed on
    // resume, although the lease had lapsed meanwhile (nobody else had taken the key).
    expect(again.body).toMatchObject({ success: true, replayed: true, effect_id: first.body.effect_id });
    expect(runsOf(tag)).toBe(1);
  });
});
