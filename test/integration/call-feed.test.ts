/** The console's call feed (docs/console.md): GET /calls and GET /calls/stream, on both stores and across replicas. */
import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { MemoryCallLog } from '../../src/store/memory/calls.ts';
import { RedisStore } from '../../src/store/redis/store.ts';
import { CallLogText, type CallLogEntry } from '../../src/store/types.ts';
import { placeOrder } from '../fixtures/order-tool.ts';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';

interface StreamEvent {
  name: string;
  data: any;
}

/**
 * Reads the SSE events of GET `url` until `until` says stop (8 s at most); `afterReady` runs once the
 * `ready` event came. node:http, not fetch: an aborted fetch leaves a connection that holds app.close.
 */
function readEvents(
  url: string,
  headers: Record<string, string>,
  until: (events: StreamEvent[]) => boolean,
  afterReady?: () => Promise<void>,
): Promise<StreamEvent[]> {
  return new Promise((resolve, reject) => {
    const events: StreamEvent[] = [];
    const request = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (response) => {
      if (response.statusCode !== 200 || !/text\/event-stream/.test(String(response.headers['content-type']))) {
        return finish(new Error(`the stream answered ${response.statusCode} ${response.headers['content-type']}`));
      }
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
          const data = /^data: (.*)$/m.exec(block)?.[1];
          events.push({ name, data: data === undefined ? null : JSON.parse(data) });
          if (name === 'ready' && afterReady) afterReady().catch(finish);
        }
        if (until(events)) finish();
      });
    });
    const timer = setTimeout(() => finish(new Error(`no matching event within 8 s: ${JSON.stringify(events)}`)), 8000);
    request.on('error', (err) => finish(err));
    function finish(err?: Error) {
      clearTimeout(timer);
      request.destroy();
      if (err) reject(err);
      else resolve(events);
    }
  });
}

describe.each(STORES)('the call feed (%s store)', (store) => {
  let app: FastifyInstance;
  let base: string;
  let keys: TestKeys;
  beforeAll(async () => {
    keys = await testKeys(['echo', 'planning_*']);
    app = await makeApp(store, { env: { API_KEYS_FILE: keys.file } });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  it('lists finished calls newest first, with arguments and results for admin keys only', async () => {
    await post(app, { name: 'echo', arguments: { text: 'from the agent' } }, { ...bearer(keys.agent), 'x-session-id': 'feed-1' });
    await post(app, { name: 'echo', arguments: { text: 'from ops' } }, bearer(keys.admin));
    await post(app, { name: 'no_such_tool', arguments: {} }, bearer(keys.admin));
    await app.toolport.feed.flush();

    const admin = await get(app, '/calls?limit=3', bearer(keys.admin));
    expect(admin.status).toBe(200);
    const [unknown, ops, agent] = admin.body.calls;
    expect(unknown).toMatchObject({ tool: 'no_such_tool', known: false, success: false, outcome: 'unknown_tool', error_code: 'unknown_tool', caller: 'ops' });
    expect(ops).toMatchObject({ tool: 'echo', caller: 'ops', session: null, outcome: 'success', arguments: { text: 'from ops' } });
    expect(ops.result).toMatchObject({ message: expect.any(String), error: null });
    expect(agent).toMatchObject({ tool: 'echo', caller: 'agent', session: 'feed-1', success: true, arguments: { text: 'from the agent' } });
    expect(agent.duration_ms).toBeGreaterThanOrEqual(0);

    // A key without admin sees its own calls, without arguments or results.
    const seen = await get(app, '/calls?limit=3', bearer(keys.agent));
    expect(seen.status).toBe(200);
    expect(seen.body.calls).toHaveLength(1);
    expect(seen.body.calls[0]).toMatchObject({ tool: 'echo', caller: 'agent', session: 'feed-1' });
    expect(seen.body.calls[0]).not.toHaveProperty('arguments');
    expect(seen.body.calls[0]).not.toHaveProperty('result');
    expect(seen.text).not.toContain('from the agent');

    expect((await get(app, '/calls')).status).toBe(401);
    expect((await get(app, '/calls?session=feed-1', bearer(keys.admin))).body.calls.every((c: any) => c.session === 'feed-1')).toBe(true);
  });

  it('streams the recent calls, then each new call as it finishes', async () => {
    await post(app, { name: 'echo', arguments: { text: 'before' } }, bearer(keys.admin));
    await app.toolport.feed.flush();
    const events = await readEvents(
      `${base}/calls/stream?limit=5`,
      bearer(keys.admin),
      (seen) => seen.some((e) => e.name === 'call' && e.data.arguments?.text === 'after'),
      async () => {
        await post(app, { name: 'echo', arguments: { text: 'after' } }, bearer(keys.admin));
      },
    );
    const names = events.map((e) => e.name);
    const ready = names.indexOf('ready');
    expect(ready).toBeGreaterThan(0);
    expect(events.slice(0, ready).some((e) => e.data.arguments?.text === 'before')).toBe(true);
    expect(events.slice(ready + 1).find((e) => e.name === 'call')!.data).toMatchObject({ tool: 'echo', caller: 'ops', arguments: { text: 'after' } });
  });

  it('streams to a key without admin only its own calls, without arguments', async () => {
    const events = await readEvents(
      `${base}/calls/stream?limit=1`,
      bearer(keys.agent),
      (seen) => seen.some((e) => e.name === 'call' && e.data.session === 'feed-live'),
      async () => {
        await post(app, { name: 'echo', arguments: { text: 'not yours' } }, bearer(keys.admin));
        await post(app, { name: 'echo', arguments: { text: 'yours' } }, { ...bearer(keys.agent), 'x-session-id': 'feed-live' });
      },
    );
    const calls = events.filter((e) => e.name === 'call').map((e) => e.data);
    expect(calls.length).toBeGreaterThan(0);
    for (const call of calls) {
      expect(call.caller).toBe('agent');
      expect(call).not.toHaveProperty('arguments');
    }
  });
});

describe('the call feed across replicas', () => {
  let a: FastifyInstance;
  let b: FastifyInstance;
  beforeAll(async () => {
    const prefix = `test:feed-${Date.now()}:`;
    a = await makeApp('redis', { env: { KEY_PREFIX: prefix } });
    b = await makeApp('redis', { env: { KEY_PREFIX: prefix } });
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it("shows every replica's calls in each replica's feed, live and in the recent list", async () => {
    const base = await a.listen({ port: 0, host: '127.0.0.1' });
    const events = await readEvents(
      `${base}/calls/stream?limit=1`,
      {},
      (seen) => seen.some((e) => e.data?.arguments?.text === 'on b'),
      async () => {
        await post(b, { name: 'echo', arguments: { text: 'on b' } });
      },
    );
    expect(events.find((e) => e.data?.arguments?.text === 'on b')!.name).toBe('call');
    await post(a, { name: 'echo', arguments: { text: 'on a' } });
    await a.toolport.feed.flush();
    const recent = (await get(b, '/calls?limit=2')).body.calls.map((c: any) => c.arguments.text);
    expect(recent).toEqual(['on a', 'on b']);
  });
});

describe('the call feed and the ledger', () => {
  it("carries the ledger key of an idempotent tool's call, run or replayed", async () => {
    const app = await makeApp('memory', { register: (registry) => registry.registerTool(placeOrder) });
    try {
      const order = { name: 'place_order', arguments: { customer: { name: 'Ada' }, items: [{ sku: 'A-1', quantity: 1 }] } };
      const first = await post(app, order, { 'x-session-id': 'feed-ledger' });
      const again = await post(app, order, { 'x-session-id': 'feed-ledger' });
      expect(first.body.idempotency_key).toEqual(expect.any(String));
      expect(again.body.replayed).toBe(true);
      await app.toolport.feed.flush();
      const [replay, ran] = (await get(app, '/calls?limit=2')).body.calls;
      expect(ran).toMatchObject({ tool: 'place_order', replayed: false, result: { idempotency_key: first.body.idempotency_key } });
      expect(replay).toMatchObject({ tool: 'place_order', replayed: true, result: { idempotency_key: first.body.idempotency_key } });
    } finally {
      await app.close();
    }
  });
});

const entry = (n: number) => new CallLogText(JSON.stringify(n));
const texts = (entries: readonly CallLogEntry[]) => entries.map((e) => e.json());

describe('the call log keeps the newest entries only', () => {
  it('in memory', async () => {
    const log = new MemoryCallLog(10);
    expect(await log.recent(5)).toEqual([]);
    for (let i = 0; i < 3; i++) await log.append([entry(i)]);
    expect(texts(await log.recent(2))).toEqual(['2', '1']);
    for (let i = 3; i < 35; i++) await log.append([entry(i)]);
    expect(texts(await log.recent(100))).toEqual(Array.from({ length: 10 }, (_, i) => JSON.stringify(34 - i)));
    // A batch longer than the log keeps its newest entries.
    await log.append(Array.from({ length: 13 }, (_, i) => entry(100 + i)));
    expect(texts(await log.recent(100))).toEqual(Array.from({ length: 10 }, (_, i) => JSON.stringify(112 - i)));
  });

  it('in memory, keeping the entries as given and handing each batch to subscribers', async () => {
    const log = new MemoryCallLog(10);
    const seen: (readonly CallLogEntry[])[] = [];
    const unsubscribe = log.subscribe((batch) => seen.push(batch));
    const batch = [entry(1), entry(2)];
    await log.append(batch);
    unsubscribe();
    await log.append([entry(3)]);
    expect(seen).toEqual([batch]);
    expect((await log.recent(3))[1]).toBe(batch[1]);
  });

  it('in Redis, in one command per batch, published to every subscriber', async () => {
    const store = new RedisStore(
      { url: inject('redisUrl') },
      { keyPrefix: `test:log-${Date.now()}:`, sessionTtlS: 60, sessionMaxEvents: 10, recentCalls: 10 },
      pino({ level: 'silent' }),
    );
    try {
      await store.waitUntilReady();
      const published: string[][] = [];
      const unsubscribe = store.calls.subscribe((batch) => published.push(texts(batch)));
      for (let i = 0; i < 7; i++) await store.calls.append([entry(2 * i), entry(2 * i + 1)]);
      expect(texts(await store.calls.recent(100))).toEqual(Array.from({ length: 10 }, (_, i) => JSON.stringify(13 - i)));
      await store.calls.append(Array.from({ length: 250 }, (_, i) => entry(1000 + i)));
      expect(texts(await store.calls.recent(3))).toEqual(['1249', '1248', '1247']);
      await expect.poll(() => published.at(-1)?.length).toBe(250);
      // The subscription may have started after the first batches; what came, came whole and in order.
      expect(published.flat()).toEqual(published.flat().toSorted((a, b) => Number(a) - Number(b)));
      unsubscribe();
    } finally {
      await store.close();
    }
  });
});

/** A result value that counts how often it is serialized. */
class Counted {
  static count = 0;
  toJSON() {
    Counted.count++;
    return { counted: true };
  }
}

describe.each(STORES)('the call feed builds each entry once (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, {
      register: (registry) =>
        registry.registerTool({
          name: 'counted',
          description: 'Answers a value that counts its serializations.',
          parameters: { type: 'object', properties: {} },
          handler: () => ok(new Counted(), 'counted'),
        }),
    });
  });
  afterAll(() => app.close());

  it('serializes an entry once, when it is first read (on Redis, when it is written), and never when nobody reads the feed', async () => {
    // What the call itself serializes (its content and its answer), measured on a first call.
    let before = Counted.count;
    await post(app, { name: 'counted', arguments: {} });
    const ofTheCall = Counted.count - before;
    await app.toolport.feed.flush();
    const written = Counted.count - before - ofTheCall;
    expect(written).toBe(store === 'redis' ? 1 : 0); // the memory store keeps the entry unserialized

    before = Counted.count;
    const first = await get(app, '/calls?limit=1');
    expect(first.body.calls[0]).toMatchObject({ tool: 'counted', result: { value: { counted: true } } });
    const again = await get(app, '/calls?limit=1');
    expect(again.body.calls[0].id).toBe(first.body.calls[0].id);
    expect(Counted.count - before).toBe(store === 'redis' ? 0 : 1);
  });

  it('serializes an entry once for every console that watches', async () => {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    let before = Counted.count;
    await post(app, { name: 'counted', arguments: {} });
    const ofTheCall = Counted.count - before;
    await app.toolport.feed.flush();

    let started = 0;
    const watch = (text: string) =>
      readEvents(
        `${base}/calls/stream?limit=1`,
        {},
        (seen) => seen.some((e) => e.name === 'call' && e.data.arguments?.text === text),
        async () => {
          if (++started === 2) {
            before = Counted.count;
            await post(app, { name: 'counted', arguments: {} });
            await post(app, { name: 'echo', arguments: { text } });
          }
        },
      );
    const [one, two] = await Promise.all([watch('seen'), watch('seen')]);
    const live = (events: StreamEvent[]) =>
      events
        .slice(events.findIndex((e) => e.name === 'ready') + 1)
        .filter((e) => e.name === 'call')
        .map((e) => e.data);
    for (const events of [one, two]) expect(live(events).map((call) => call.tool)).toEqual(['counted', 'echo']);
    expect(live(one)[0].id).toBe(live(two)[0].id);
    expect(Counted.count - before).toBe(ofTheCall + 1);
  });
});

describe('call entries', () => {
  it('cut long arguments and results to a preview that says how long they were', async () => {
    const app = await makeApp('memory');
    try {
      const text = 'x'.repeat(5000);
      await post(app, { name: 'echo', arguments: { text } });
      await app.toolport.feed.flush();
      const [call] = (await get(app, '/calls?limit=1')).body.calls;
      expect(call.arguments).toBe(`${JSON.stringify({ text }).slice(0, 4000)}… (cut: ${JSON.stringify({ text }).length} characters)`);
      expect(call.result).toMatch(/^\{"message":.*… \(cut: \d+ characters\)$/s);
      expect(call).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        tool: 'echo',
        outcome: 'success',
      });
    } finally {
      await app.close();
    }
  });
});
