/** context.session writes and the ToolInvoked event: committed together on success, writes dropped on failure. */
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { makeApp, post, sessionEvents, STORES } from '../helpers/app.ts';

describe.each(STORES)('session writes and events (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { env: { SESSION_MAX_EVENTS: '5', SESSION_TTL_S: '120' } });
  });
  afterAll(() => app.close());

  const events = (session: string) => sessionEvents(app, session);

  it("commits a successful handler's writes, visible to the next call of the session", async () => {
    const headers = { 'x-session-id': `s-ok-${store}` };
    expect((await post(app, { name: 'counter', arguments: {} }, headers)).body.value).toEqual({ count: 1 });
    expect((await post(app, { name: 'counter', arguments: {} }, headers)).body.value).toEqual({ count: 2 });
    expect((await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': `other-${store}` })).body.value).toEqual({ count: 1 });
  });

  it('leaves the session as it was when the handler writes then throws, or writes then reports failure', async () => {
    const headers = { 'x-session-id': `s-rollback-${store}` };
    await post(app, { name: 'counter', arguments: {} }, headers);
    expect((await post(app, { name: 'counter', arguments: { fail: 'throw' } }, headers)).body.error.code).toBe('handler_error');
    expect((await post(app, { name: 'counter', arguments: { fail: 'result' } }, headers)).body.error.code).toBe('tool_failed');
    expect((await post(app, { name: 'counter', arguments: {} }, headers)).body.value).toEqual({ count: 2 });
  });

  it('records a ToolInvoked event for every call of the session, failures included', async () => {
    const session = `s-events-${store}`;
    await post(app, { name: 'echo', arguments: { text: 'a' }, id: 'e1' }, { 'x-session-id': session });
    await post(app, { name: 'nope', arguments: {}, id: 'e2' }, { 'x-session-id': session });
    await post(app, { name: 'echo', arguments: { bad: 1 }, id: 'e3' }, { 'x-session-id': session });
    const log = await events(session);
    expect(log.map((e) => [e.call_id, e.tool, e.success, e.error_code])).toEqual([
      ['e1', 'echo', true, null],
      ['e2', 'nope', false, 'unknown_tool'],
      ['e3', 'echo', false, 'invalid_arguments'],
    ]);
    expect(log[0]).toMatchObject({ type: 'ToolInvoked', arguments_hash: expect.stringMatching(/^[0-9a-f]{64}$/), caller: null });
    expect(typeof log[0]!.duration_ms).toBe('number');
  });

  it('records the event of a call that ran out of time, without its writes', async () => {
    const session = `s-deadline-${store}`;
    await post(app, { name: 'hang', arguments: {}, id: 'late' }, { 'x-session-id': session, 'x-timeout-ms': '50' });
    expect((await events(session)).map((e) => e.error_code)).toEqual(['deadline_exceeded']);
  });

  it('keeps only the newest SESSION_MAX_EVENTS events', async () => {
    const session = `s-bounded-${store}`;
    for (let i = 0; i < 8; i++) await post(app, { name: 'echo', arguments: { text: 'a' }, id: `b${i}` }, { 'x-session-id': session });
    expect((await events(session)).map((e) => e.call_id)).toEqual(['b3', 'b4', 'b5', 'b6', 'b7']);
  });

  it('names the parent call in the event of a nested call', async () => {
    const session = `s-nested-${store}`;
    await post(app, { name: 'delegates', arguments: { text: 'x' }, id: 'parent' }, { 'x-session-id': session });
    const log = await events(session);
    expect(log.map((e) => [e.tool, e.parent_call_id ?? null])).toEqual([
      ['echo', 'parent'],
      ['delegates', null],
    ]);
  });
});

describe('session keys in Redis', () => {
  it('share one hash tag and carry a TTL no longer than SESSION_TTL_S', async () => {
    const prefix = `ttl-test-${Date.now()}:`;
    const app = await makeApp('redis', { env: { SESSION_TTL_S: '60', KEY_PREFIX: prefix } });
    const redis = new Redis(inject('redisUrl'));
    try {
      await post(app, { name: 'counter', arguments: {} }, { 'x-session-id': 'ttl-1' });
      const keys = (await redis.keys(`${prefix}{session:*`)).sort();
      expect(keys).toEqual(['events', 'seq', 'state', 'versions'].map((part) => `${prefix}{session:ttl-1}:${part}`));
      for (const key of keys) {
        const ttl = await redis.pttl(key);
        expect(ttl).toBeGreaterThan(55_000);
        expect(ttl).toBeLessThanOrEqual(60_000);
      }
    } finally {
      redis.disconnect();
      await app.close();
    }
  });
});
