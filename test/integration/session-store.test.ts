/** The Store's session contract, the same on memory and Redis: versions, compare-and-set, event pages. */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import type { Store } from '../../src/store/types.ts';

describe.each(STORES)('session store contract (%s store)', (kind) => {
  let app: FastifyInstance;
  let store: Store;
  beforeAll(async () => {
    app = await makeApp(kind, { env: { SESSION_MAX_EVENTS: '4' } });
    store = app.toolport.store;
  });
  afterAll(() => app.close());

  const commit = (id: string, reads: [string, number][], writes: [string, string | null][], event = '{"n":1}') =>
    store.commitSession(id, { reads: new Map(reads), writes: new Map(writes), event });

  it('reads absent keys as null at version 0, and counts a version per key on every write', async () => {
    const id = randomUUID();
    expect(await store.sessionRead(id, ['a', 'b'])).toEqual({ values: [null, null], versions: [0, 0] });
    expect(await commit(id, [], [['a', '1']])).toBe(true);
    expect(
      await commit(
        id,
        [],
        [
          ['a', '2'],
          ['b', '"x"'],
        ],
      ),
    ).toBe(true);
    expect(await store.sessionRead(id, ['a', 'b', 'c'])).toEqual({ values: ['2', '"x"', null], versions: [2, 1, 0] });
    expect(await commit(id, [], [['a', null]])).toBe(true);
    expect(await store.sessionRead(id, ['a'])).toEqual({ values: [null], versions: [3] });
  });

  it('refuses a commit whose read versions changed, applying nothing and logging no event', async () => {
    const id = randomUUID();
    await commit(id, [], [['plan', '"v1"']], '{"n":1}');
    expect(
      await commit(
        id,
        [['plan', 0]],
        [
          ['plan', '"lost"'],
          ['other', '1'],
        ],
        '{"n":2}',
      ),
    ).toBe(false);
    expect(await store.sessionRead(id, ['plan', 'other'])).toEqual({ values: ['"v1"', null], versions: [1, 0] });
    expect((await store.sessionEvents(id, 0, 10)).events).toEqual(['{"n":1}']);
    expect(await commit(id, [['plan', 1]], [['plan', '"v2"']], '{"n":3}')).toBe(true);
    expect((await store.sessionRead(id, ['plan'])).values).toEqual(['"v2"']);
  });

  it('pages events by sequence number, stable while the oldest are trimmed', async () => {
    const id = randomUUID();
    for (let i = 1; i <= 6; i++) await commit(id, [], [], `{"n":${i}}`);
    // SESSION_MAX_EVENTS is 4: events 3..6 are kept, numbered 3..6.
    expect(await store.sessionEvents(id, 0, 10)).toEqual({ events: ['{"n":3}', '{"n":4}', '{"n":5}', '{"n":6}'], firstSeq: 3, total: 6 });
    expect(await store.sessionEvents(id, 4, 1)).toEqual({ events: ['{"n":5}'], firstSeq: 5, total: 6 });
    expect((await store.sessionEvents(id, 6, 10)).events).toEqual([]);
    // The newest N with the total, in one read; more than are kept gives what is kept.
    expect(await store.sessionEvents(id, 'newest', 2)).toEqual({ events: ['{"n":5}', '{"n":6}'], firstSeq: 5, total: 6 });
    expect(await store.sessionEvents(id, 'newest', 10)).toEqual({ events: ['{"n":3}', '{"n":4}', '{"n":5}', '{"n":6}'], firstSeq: 3, total: 6 });
    expect(await store.sessionEvents(`none-${id}`, 'newest', 5)).toEqual({ events: [], firstSeq: 1, total: 0 });
  });

  it('serves the event log a page at a time at GET /sessions/{id}/events', async () => {
    const id = `pages-${randomUUID()}`;
    for (let i = 0; i < 6; i++) await post(app, { name: 'echo', arguments: { text: 't' }, id: `c${i}` }, { 'x-session-id': id });
    const first = await get(app, `/sessions/${id}/events?limit=3`);
    expect(first.body).toMatchObject({ session_id: id, total: 6, next_after: 5 });
    expect(first.body.events.map((e: { seq: number; call_id: string }) => [e.seq, e.call_id])).toEqual([
      [3, 'c2'],
      [4, 'c3'],
      [5, 'c4'],
    ]);
    const second = await get(app, `/sessions/${id}/events?limit=3&after=5`);
    expect(second.body.events.map((e: { call_id: string }) => e.call_id)).toEqual(['c5']);
    expect(second.body.next_after).toBeNull();
    for (const query of ['limit=0', 'limit=1001', 'after=-1', 'after=x']) {
      const bad = await get(app, `/sessions/${id}/events?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
    }
  });
});
