/** A caller that goes away, over a real socket: the handler's signal fires and nothing is committed. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, sessionEvents, STORES } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';
import { aborted, started } from '../helpers/tools.ts';

describe.each(STORES)('caller disconnect (%s store)', (store) => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp(store);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  it("aborts the handler's signal when the caller disconnects, and records the call as cancelled", async () => {
    const session = `cancel-${store}`;
    const callId = `watch-${store}`;
    const request = new AbortController();
    const response = fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-session-id': session },
      body: JSON.stringify({ name: 'watch_abort', arguments: {}, id: callId }),
      signal: request.signal,
    }).catch((err: unknown) => err);
    await until('the handler starts', () => started.has(callId));
    const gone = Date.now();
    request.abort();
    await response;
    const abortedAt = await until('the handler is aborted', () => aborted.get(callId));
    expect(abortedAt).toBeGreaterThanOrEqual(gone);
    expect(abortedAt - gone).toBeLessThan(1000);
    await until('the cancelled call is recorded', async () => (await sessionEvents(app, session)).length > 0);
    const events = await sessionEvents(app, session);
    expect(events.map((e) => [e.call_id, e.error_code])).toEqual([[callId, 'cancelled']]);
  });

  it('aborts the signal at the deadline', async () => {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-timeout-ms': '80' },
      body: JSON.stringify({ name: 'watch_abort', arguments: {}, id: `deadline-${store}` }),
    });
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('deadline_exceeded');
    expect(aborted.has(`deadline-${store}`)).toBe(true);
  });
});
