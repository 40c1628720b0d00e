/**
 * Deciding an approval while Redis is unreachable: the decision answers 503 at once (stopped) or
 * after the command timeout (paused, SIGSTOP); afterwards the approval is either still pending or
 * decided by exactly that decision (one Lua compare-and-set), never half-written, and the approved
 * call runs once.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreUnavailable } from '../../src/errors.ts';
import { RedisServer } from '../../support/redis-server.ts';
import { get, makeApp, post, waitUntilReady } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';

describe('deciding an approval while Redis is unreachable', () => {
  let redis: RedisServer;
  let app: FastifyInstance;
  let fx: PolicyFixture;
  beforeEach(async () => {
    redis = await RedisServer.start();
    fx = await policyFixture();
    app = await makeApp('redis', { redisUrl: redis.url, env: fx.env, register: fx.register });
  });
  afterEach(async () => {
    await app.close();
    await redis.stop();
  });

  const call = (order: string) => post(app, { name: 'payments_refund', arguments: { order, amount: 5000 } }, bearer(fx.keys.agent));
  const decide = (id: string) => post(app, { decision: 'approve', note: 'ok' }, bearer(fx.keys.finance), `/approvals/${id}/decision`);

  it('answers 503 within 1.5 s while Redis is stopped, and decides again once it is back', async () => {
    const id = (await call('f-1')).body.approval.id as string;
    await redis.stop();
    await sleep(100);
    const started = performance.now();
    const refused = await decide(id);
    expect(refused.status).toBe(503);
    expect(refused.body.type).toContain('store-unavailable');
    expect(performance.now() - started).toBeLessThan(1500);
    expect(fx.runs.get('payments_refund')).toBeUndefined();

    // The throwaway Redis comes back empty: the call is held anew, and its decision works.
    await redis.restart();
    await waitUntilReady(app);
    const again = (await call('f-1')).body.approval.id as string;
    expect((await decide(again)).status).toBe(200);
    expect((await call('f-1')).body.success).toBe(true);
    expect((await call('f-1')).body.replayed).toBe(true);
    expect(fx.runs.get('payments_refund')).toBe(1);
  });

  it('answers 503 while Redis is paused, and afterwards the approval is pending or decided by that one decision, never half-written', async () => {
    const id = (await call('f-2')).body.approval.id as string;
    redis.pause();
    let refused;
    try {
      refused = await decide(id);
    } finally {
      redis.resume();
    }
    expect(refused.status).toBe(503);
    await waitUntilReady(app);
    const record = (await get(app, `/approvals/${id}`, bearer(fx.keys.ops))).body;
    if (record.status === 'pending') expect(record.decision).toBeNull();
    else expect(record).toMatchObject({ status: 'approved', decision: { by: 'finance', note: 'ok', arguments_edited: false } });
    // Sent again: it is recorded now, or it already was (409, the first stands); either way the call runs once.
    expect([200, 409]).toContain((await decide(id)).status);
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.ops))).body.status).toBe('approved');
    expect((await call('f-2')).body.success).toBe(true);
    expect((await call('f-2')).body.replayed).toBe(true);
    expect(fx.runs.get('payments_refund')).toBe(1);
  });

  it('answers 200 when the decision stands but its session event cannot be written, and the call then runs once', async () => {
    const session = { ...bearer(fx.keys.agent), 'x-session-id': 'faults-event' };
    const held = await post(app, { name: 'payments_refund', arguments: { order: 'f-3', amount: 5000 } }, session);
    const id = held.body.approval.id as string;
    const store = app.toolport.store;
    const commit = store.commitSession.bind(store);
    store.commitSession = () => Promise.reject(new StoreUnavailable('the store went away after the decision'));
    let decided;
    try {
      decided = await decide(id);
    } finally {
      store.commitSession = commit;
    }
    expect(decided.status).toBe(200);
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.ops))).body.status).toBe('approved');
    expect((await post(app, { name: 'payments_refund', arguments: { order: 'f-3', amount: 5000 } }, session)).body.success).toBe(true);
    expect(fx.runs.get('payments_refund')).toBe(1);
  });
});
