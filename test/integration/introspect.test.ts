/** Introspect tools (docs/plugins-and-sources.md): the caller's catalog with hashes and versions, the session's plan and events. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';

describe.each(STORES)('introspect tools (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());

  it('lists the catalog with each hash and its versions, and the catalog hash discovery serves', async () => {
    const result = (await post(app, { name: 'introspect_catalog', arguments: {} })).body;
    const listed = (await get(app, '/tools')).body;
    expect(result.value.catalog_hash).toBe(listed.hash);
    const echo = result.value.tools.find((t: { name: string }) => t.name === 'echo');
    expect(echo).toMatchObject({ hash: listed.tools.find((t: { name: string }) => t.name === 'echo').hash });
    expect(echo.versions.map((v: { hash: string }) => v.hash)).toContain(echo.hash);
  });

  it("shows the session's plan and its newest events, oldest first", async () => {
    const headers = { 'x-session-id': `intro-${store}` };
    await post(app, { name: 'planning_setup_plan', arguments: { objective: 'look inside', initial_steps: ['a'] }, id: 'c1' }, headers);
    for (let i = 2; i <= 4; i++) await post(app, { name: 'echo', arguments: { text: 'x' }, id: `c${i}` }, headers);
    const result = (await post(app, { name: 'introspect_session', arguments: { events: 2 } }, headers)).body;
    expect(result.value.plan).toMatchObject({ objective: 'look inside', status: 'active' });
    expect(result.value.events.map((e: { call_id: string; seq: number }) => [e.seq, e.call_id])).toEqual([
      [3, 'c3'],
      [4, 'c4'],
    ]);
    expect(result.value.events_total).toBe(4);
    const started = (await post(app, { name: 'introspect_session', arguments: {} })).body;
    expect(started.message).toContain(`pass "session_id": "${started.value.session_id}"`);
    expect(started.value).toMatchObject({ plan: null, events: [] });
    const named = (await post(app, { name: 'introspect_session', arguments: { session_id: `intro-${store}` } })).body;
    expect(named.value).toMatchObject({ session_id: `intro-${store}`, plan: { objective: 'look inside' } });
    expect(named.message).not.toMatch(/pass "session_id"/);
  });
});
