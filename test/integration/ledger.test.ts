/** Exactly-once execution of idempotent tools (docs/ledger.md), the same on both stores. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post, STORES } from '../helpers/app.ts';
import { failuresLeft, registerLedgerTools, runsOf, started } from '../helpers/ledger-tools.ts';

describe.each(STORES)('effect ledger (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { register: registerLedgerTools, env: { LEDGER_LEASE_MS: '2000' } });
  });
  afterAll(() => app.close());

  const tag = () => `${store}-${randomUUID().slice(0, 8)}`;
  const call = (name: string, args: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(app, { name, arguments: args }, { 'x-session-id': `s-${store}`, ...headers });

  it('replays the recorded result without running the handler', async () => {
    const t = tag();
    const first = await call('charge', { tag: t, amount: 5 });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ success: true, replayed: false, effect_id: expect.any(String) });
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await call('charge', { amount: 5, tag: t }); // same arguments, other order
    expect(again.body).toMatchObject({ success: true, replayed: true, value: first.body.value, message: first.body.message });
    expect(again.body.effect_id).toBe(first.body.effect_id);
    expect(again.body.idempotency_key).toBe(first.body.idempotency_key);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(runsOf(t)).toBe(1);
  });

  it('keys by scope, tool and the SHA-256 of the canonical arguments', async () => {
    const t = tag();
    const result = await call('charge', { tag: t });
    expect(result.body.idempotency_key).toMatch(new RegExp(`^session:s-${store}:charge:[0-9a-f]{64}$`));
    const global = await post(app, { name: 'charge_global', arguments: { tag: t } });
    expect(global.body.idempotency_key).toMatch(/^global:charge_global:[0-9a-f]{64}$/);
    const anonymous = await post(app, { name: 'charge', arguments: { tag: t } });
    expect(anonymous.body.idempotency_key).toMatch(/^session::charge:[0-9a-f]{64}$/);
  });

  it('runs again for other arguments, and in another session', async () => {
    const t = tag();
    await call('charge', { tag: t, amount: 1 });
    await call('charge', { tag: t, amount: 2 });
    await call('charge', { tag: t, amount: 1 }, { 'x-session-id': `other-${store}` });
    expect(runsOf(t)).toBe(3);
  });

  it('shares a global-scope record across sessions', async () => {
    const t = tag();
    await call('charge_global', { tag: t }, { 'x-session-id': 'a' });
    const b = await call('charge_global', { tag: t }, { 'x-session-id': 'b' });
    expect(b.body.replayed).toBe(true);
    expect(runsOf(t)).toBe(1);
  });

  it('keys the params strategy by param_keys only, and custom by its key function', async () => {
    const t = tag();
    await call('order', { tag: t, order_id: 'o1', note: 'first' });
    const other = await call('order', { tag: t, order_id: 'o1', note: 'second' });
    expect(other.body.replayed).toBe(true);
    await call('custom_keyed', { tag: t, noise: 1 });
    expect((await call('custom_keyed', { tag: t, noise: 2 })).body.replayed).toBe(true);
    expect(runsOf(t)).toBe(2);
  });

  it('runs the handler once for 100 concurrent identical calls, and all get its value', async () => {
    const t = tag();
    const results = await Promise.all(Array.from({ length: 100 }, () => call('charge', { tag: t, ms: 150 })));
    expect(runsOf(t)).toBe(1);
    const ids = new Set(results.map((r) => r.body.value?.charge_id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.body.replayed === false)).toHaveLength(1);
  });

  it('answers in_progress when the running call does not finish within the deadline', async () => {
    const t = tag();
    const running = call('charge', { tag: t, ms: 400 });
    await started(t);
    const waiting = await call('charge', { tag: t, ms: 400 }, { 'x-timeout-ms': '100' });
    expect(waiting.status).toBe(200);
    expect(waiting.body).toMatchObject({ success: false, error: { code: 'in_progress' }, replayed: false });
    expect(waiting.body.message).toMatch(/still running/);
    expect((await running).body.success).toBe(true);
    expect(runsOf(t)).toBe(1);
  });

  it('records no failure: the next call runs the handler', async () => {
    const t = tag();
    failuresLeft.set(t, 1);
    const failed = await call('charge', { tag: t });
    expect(failed.body).toMatchObject({ success: false, error: { code: 'tool_failed' }, effect_id: null });
    const retried = await call('charge', { tag: t });
    expect(retried.body).toMatchObject({ success: true, replayed: false });
    expect(runsOf(t)).toBe(2);
  });

  it('records nothing for a call that ran out of time', async () => {
    const t = tag();
    const late = await call('charge', { tag: t, ms: 300 }, { 'x-timeout-ms': '50' });
    expect(late.body.error.code).toBe('deadline_exceeded');
    const retried = await call('charge', { tag: t, ms: 300 });
    expect(retried.body).toMatchObject({ success: true, replayed: false });
    expect(runsOf(t)).toBe(2);
  });

  it('runs again once the record has expired (ttl_s)', async () => {
    const t = tag();
    await call('short_lived', { tag: t });
    expect((await call('short_lived', { tag: t })).body.replayed).toBe(true);
    await sleep(1100);
    expect((await call('short_lived', { tag: t })).body.replayed).toBe(false);
    expect(runsOf(t)).toBe(2);
  });

  it('replays a value hidden from the model the same way, without re-committing session writes', async () => {
    const session = { 'x-session-id': `bump-${tag()}` };
    const t = tag();
    const first = await call('bump', { tag: t }, session);
    expect(first.body).toMatchObject({ value: { count: 1 }, content: 'count is 1' });
    const replay = await call('bump', { tag: t }, session);
    expect(replay.body).toMatchObject({ replayed: true, value: { count: 1 }, content: 'count is 1', exclude_value_from_context: true });
    // `counter` increments the same session key: had the replay committed again, it would read 2.
    expect((await call('counter', {}, session)).body.value).toEqual({ count: 2 });
  });

  describe('with Idempotency-Key', () => {
    it('uses the header in place of the argument hash and replays the first result', async () => {
      const t = tag();
      const key = `k-${t}`;
      const first = await call('charge', { tag: t }, { 'idempotency-key': key });
      expect(first.body.idempotency_key).toBe(`session:s-${store}:charge:${key}`);
      const again = await call('charge', { tag: t }, { 'idempotency-key': key });
      expect(again.body.replayed).toBe(true);
      expect(runsOf(t)).toBe(1);
    });

    it('answers 422 when the key is reused with another payload', async () => {
      const t = tag();
      await call('charge', { tag: t, amount: 1 }, { 'idempotency-key': `k-${t}` });
      const reused = await call('charge', { tag: t, amount: 2 }, { 'idempotency-key': `k-${t}` });
      expect(reused.status).toBe(422);
      expect(reused.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(reused.body.type).toBe('urn:toolport:problem:idempotency-key-reused');
      expect(runsOf(t)).toBe(1);
    });

    it('answers 409 with Retry-After while a call with the key is running', async () => {
      const t = tag();
      const running = call('charge', { tag: t, ms: 300 }, { 'idempotency-key': `k-${t}` });
      await started(t);
      const conflict = await call('charge', { tag: t, ms: 300 }, { 'idempotency-key': `k-${t}` });
      expect(conflict.status).toBe(409);
      expect(conflict.body.type).toBe('urn:toolport:problem:idempotency-key-in-flight');
      expect(Number(conflict.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect((await running).body.success).toBe(true);
      expect(runsOf(t)).toBe(1);
    });

    it('gives each call of a turn its own key, so a retried turn replays every call', async () => {
      const t = tag();
      const turn = {
        calls: [
          { name: 'charge', arguments: { tag: t, amount: 1 } },
          { name: 'charge', arguments: { tag: t, amount: 2 } },
        ],
      };
      const headers = { 'x-session-id': `s-${store}`, 'idempotency-key': `turn-${t}` };
      const first = await post(app, turn, headers);
      expect(first.body.results.map((r: { idempotency_key: string }) => r.idempotency_key.split(':').pop())).toEqual(['1', '2']);
      const again = await post(app, turn, headers);
      expect(again.body.results.map((r: { replayed: boolean }) => r.replayed)).toEqual([true, true]);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(runsOf(t)).toBe(2);
    });

    it('refuses a malformed key with 400', async () => {
      const bad = await call('charge', { tag: tag() }, { 'idempotency-key': 'has space' });
      expect(bad.status).toBe(400);
      expect(bad.body.type).toBe('urn:toolport:problem:invalid-header');
    });
  });
});
