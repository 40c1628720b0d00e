/**
 * Tasks over HTTP (docs/tasks.md) on each store: Prefer: respond-async → 202 + Location, the task's
 * result equal to the synchronous answer, long-poll, cancel, deadlines, listing, ownership by key.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { aborted, started } from '../helpers/tools.ts';
import { comparable, until } from '../helpers/tasks.ts';

const ASYNC = { prefer: 'respond-async' };

async function poll(app: FastifyInstance, id: string, headers: Record<string, string> = {}, timeoutMs = 30_000): Promise<Record<string, any>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const task = (await get(app, `/tasks/${id}`, headers)).body;
    if (task.status !== 'working' || Date.now() > until) return task;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.each(STORES)('tasks over HTTP (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());

  it('answers 202 with Location and the task at once, then the very result the synchronous call answers', async () => {
    const call = { id: 'call_steps', name: 'steps', arguments: { n: 3, ms: 100 } };
    const accepted = await post(app, call, ASYNC);
    expect(accepted.status).toBe(202);
    expect(accepted.headers.location).toBe(`/tasks/${accepted.body.task_id}`);
    expect(accepted.headers['preference-applied']).toBe('respond-async');
    expect(accepted.body).toMatchObject({ status: 'working', tool: 'steps', call_id: 'call_steps', ttl_s: 86400, poll_interval_ms: 1000 });
    expect(Object.keys(accepted.body)).toEqual(
      expect.arrayContaining(['task_id', 'status', 'tool', 'call_id', 'created_at', 'updated_at', 'ttl_s', 'poll_interval_ms']),
    );

    const done = await poll(app, accepted.body.task_id);
    expect(done.status).toBe('completed');
    expect(done.progress).toEqual({ done: 3, total: 3 });
    const sync = await post(app, call);
    expect(comparable(done.result)).toEqual(comparable(sync.body));
    expect(done.result.tool_message).toEqual(sync.body.tool_message);
  });

  it('runs POST /tools/{name}/invoke and a whole turn as one task', async () => {
    const byName = await post(app, { text: 'hi' }, ASYNC, '/tools/echo/invoke');
    expect(byName.status).toBe(202);
    expect(byName.body.tool).toBe('echo');
    expect(byName.body.call_id).toMatch(/^call_/);
    const echoed = await poll(app, byName.body.task_id);
    expect(echoed.result).toMatchObject({ id: byName.body.call_id, name: 'echo', success: true, value: { text: 'hi' } });

    const turn = {
      role: 'assistant',
      tool_calls: [
        { id: 'c1', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } },
        { id: 'c2', type: 'function', function: { name: 'fails', arguments: '{}' } },
      ],
    };
    const accepted = await post(app, turn, ASYNC);
    expect(accepted.body).toMatchObject({ tool: 'echo,fails', call_id: 'c1,c2' });
    const done = await poll(app, accepted.body.task_id);
    const sync = await post(app, turn);
    expect(done.status).toBe('completed');
    expect(done.result.messages).toEqual(sync.body.messages);
    expect(done.result.results.map(comparable)).toEqual(sync.body.results.map(comparable));
  });

  it('holds GET ?wait_ms= until the task ends, and no longer', async () => {
    const accepted = await post(app, { name: 'slow', arguments: { ms: 400 } }, ASYNC);
    const begun = Date.now();
    const done = await get(app, `/tasks/${accepted.body.task_id}?wait_ms=30000`);
    expect(done.body.status).toBe('completed');
    expect(Date.now() - begun).toBeLessThan(20_000); // answered when the task ended, not when the wait ran out

    const hanging = await post(app, { name: 'hang', arguments: {} }, ASYNC);
    const before = Date.now();
    const still = await get(app, `/tasks/${hanging.body.task_id}?wait_ms=300`);
    expect(still.body.status).toBe('working');
    expect(Date.now() - before).toBeGreaterThanOrEqual(290);
    expect((await app.inject({ method: 'DELETE', url: `/tasks/${hanging.body.task_id}` })).statusCode).toBe(200);
    expect((await get(app, `/tasks/${hanging.body.task_id}?wait_ms=30001`)).status).toBe(400);
  });

  it('cancels with DELETE: the handler is aborted and the task ends cancelled', async () => {
    const accepted = await post(app, { name: 'watch_abort', arguments: {} }, ASYNC);
    await until('the handler starts', () => started.has(accepted.body.call_id));
    const cancelledAt = Date.now();
    const answer = await app.inject({ method: 'DELETE', url: `/tasks/${accepted.body.task_id}` });
    expect(answer.statusCode).toBe(200);
    expect(['working', 'cancelled']).toContain(answer.json().status);
    const done = await get(app, `/tasks/${accepted.body.task_id}?wait_ms=30000`);
    expect(done.body).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
    expect(done.body.result).toBeUndefined();
    expect((await until('the handler is aborted', () => aborted.get(accepted.body.call_id))) - cancelledAt).toBeLessThan(1000);
    // Cancelling an ended task answers it as it stands.
    expect((await app.inject({ method: 'DELETE', url: `/tasks/${accepted.body.task_id}` })).json().status).toBe('cancelled');
  });

  it('ends failed with deadline_exceeded at X-Timeout-Ms, and answers tool-level failures as completed', async () => {
    const timed = await post(app, { name: 'slow', arguments: { ms: 5000 } }, { ...ASYNC, 'x-timeout-ms': '150' });
    const done = await get(app, `/tasks/${timed.body.task_id}?wait_ms=30000`);
    expect(done.body).toMatchObject({ status: 'failed', error: { code: 'deadline_exceeded' } });

    const failing = await post(app, { name: 'fails', arguments: {} }, ASYNC);
    const failed = await get(app, `/tasks/${failing.body.task_id}?wait_ms=30000`);
    expect(failed.body).toMatchObject({ status: 'completed', result: { success: false } });
    const unknown = await post(app, { name: 'no_such_tool', arguments: {} }, ASYNC);
    expect((await get(app, `/tasks/${unknown.body.task_id}?wait_ms=30000`)).body.result.error.code).toBe('unknown_tool');
  });

  it('lets a task run past DEFAULT_TIMEOUT_MS: its deadline is TASK_TIMEOUT_MS when neither caller nor tool sets one', async () => {
    const short = await makeApp(store, { env: { DEFAULT_TIMEOUT_MS: '100', TASK_TIMEOUT_MS: '5000' } });
    try {
      expect((await post(short, { name: 'slow', arguments: { ms: 300 } })).body.error.code).toBe('deadline_exceeded');
      const accepted = await post(short, { name: 'slow', arguments: { ms: 300 } }, ASYNC);
      expect((await get(short, `/tasks/${accepted.body.task_id}?wait_ms=30000`)).body).toMatchObject({ status: 'completed', result: { success: true } });
    } finally {
      await short.close();
    }
  });

  it('lists the tasks newest first, a page at a time, without their results', async () => {
    const lister = await makeApp(store);
    try {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await post(lister, { name: 'echo', arguments: { text: `t${i}` } }, ASYNC)).body.task_id);
      const first = await get(lister, '/tasks?limit=2');
      expect(first.body.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([ids[4], ids[3]]);
      expect(first.body.tasks[0].result).toBeUndefined();
      const second = await get(lister, `/tasks?limit=2&cursor=${first.body.next_cursor}`);
      const third = await get(lister, `/tasks?limit=2&cursor=${second.body.next_cursor}`);
      expect([...second.body.tasks, ...third.body.tasks].map((t: { task_id: string }) => t.task_id)).toEqual([ids[2], ids[1], ids[0]]);
      expect(third.body.next_cursor).toBeNull();
      expect((await get(lister, '/tasks?limit=0')).status).toBe(400);
    } finally {
      await lister.close();
    }
  });

  it('runs at most TASK_CONCURRENCY tasks at once; the rest wait queued and start oldest first as slots free', async () => {
    const narrow = await makeApp(store, { env: { TASK_CONCURRENCY: '2' } });
    try {
      const accepted: Record<string, any>[] = [];
      for (let i = 0; i < 4; i++)
        accepted.push((await post(narrow, { id: `slot-${store}-${i}-${randomUUID()}`, name: 'watch_abort', arguments: {} }, ASYNC)).body);
      expect(accepted.map((t) => [t.queued, t.attempts])).toEqual([
        [false, 1],
        [false, 1],
        [true, 0],
        [true, 0],
      ]);
      await until('the first two handlers start', () => started.has(accepted[0]!.call_id) && started.has(accepted[1]!.call_id));
      const view = async (i: number) => (await get(narrow, `/tasks/${accepted[i]!.task_id}`)).body;
      expect(await view(2)).toMatchObject({ status: 'working', queued: true, attempts: 0 });
      expect(started.has(accepted[2]!.call_id)).toBe(false);

      // A queued task that is cancelled ends at once, without ever running.
      const cancelledQueued = await narrow.inject({ method: 'DELETE', url: `/tasks/${accepted[3]!.task_id}` });
      expect(cancelledQueued.json()).toMatchObject({ status: 'cancelled', queued: false, attempts: 0, error: { code: 'cancelled' } });

      // A slot frees: the oldest queued task takes it.
      await narrow.inject({ method: 'DELETE', url: `/tasks/${accepted[0]!.task_id}` });
      await until('the queued task starts in the freed slot', () => started.has(accepted[2]!.call_id));
      expect(await view(2)).toMatchObject({ status: 'working', queued: false, attempts: 1 });
      expect(started.has(accepted[3]!.call_id)).toBe(false);
      for (const i of [1, 2]) await narrow.inject({ method: 'DELETE', url: `/tasks/${accepted[i]!.task_id}` });
      expect((await get(narrow, `/tasks/${accepted[2]!.task_id}?wait_ms=30000`)).body.status).toBe('cancelled');
    } finally {
      await narrow.close();
    }
  });

  it('answers 404 for a task that does not exist and 400 for an id that cannot be one', async () => {
    expect((await get(app, '/tasks/0190a4b8-0000-7000-8000-000000000000')).status).toBe(404);
    expect((await get(app, '/tasks/not-a-task')).status).toBe(400);
  });

  it('finishes 100 tasks started at once, losing none', async () => {
    const accepted = await Promise.all(Array.from({ length: 100 }, (_, i) => post(app, { name: 'slow', arguments: { ms: 50, tag: `t${i}` } }, ASYNC)));
    expect(accepted.every((a) => a.status === 202)).toBe(true);
    expect(new Set(accepted.map((a) => a.body.task_id)).size).toBe(100);
    const done = await Promise.all(accepted.map((a) => get(app, `/tasks/${a.body.task_id}?wait_ms=30000`)));
    expect(done.map((d) => d.body.status)).toEqual(Array(100).fill('completed'));
    expect(done.map((d) => d.body.result.value.tag)).toEqual(accepted.map((_, i) => `t${i}`));
  });
});

describe('tasks belong to the API key that created them', () => {
  const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
  const SECRETS = { ops: `sk-ops-${randomUUID()}`, alice: `sk-alice-${randomUUID()}`, bob: `sk-bob-${randomUUID()}` };
  const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });
  let app: FastifyInstance;
  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-task-keys-'));
    const file = path.join(dir, 'keys.json');
    await writeFile(
      file,
      JSON.stringify([
        { id: 'ops', key_sha256: sha(SECRETS.ops), tools: ['*'], admin: true },
        { id: 'alice', key_sha256: sha(SECRETS.alice), tools: ['*'] },
        { id: 'bob', key_sha256: sha(SECRETS.bob), tools: ['echo'] },
      ]),
    );
    app = await makeApp('memory', { env: { API_KEYS_FILE: file } });
  });
  afterAll(() => app.close());

  it('lets another key neither read, wait on, list nor cancel it; an admin key sees it', async () => {
    const accepted = await post(app, { name: 'watch_abort', arguments: {} }, { ...ASYNC, ...bearer(SECRETS.alice) });
    expect(accepted.status).toBe(202);
    const url = `/tasks/${accepted.body.task_id}`;
    expect((await get(app, url, bearer(SECRETS.bob))).status).toBe(404);
    expect((await get(app, `${url}?wait_ms=100`, bearer(SECRETS.bob))).status).toBe(404);
    expect((await app.inject({ method: 'DELETE', url, headers: bearer(SECRETS.bob) })).statusCode).toBe(404);
    expect((await get(app, '/tasks', bearer(SECRETS.bob))).body.tasks).toEqual([]);
    expect((await get(app, url)).status).toBe(401);
    expect((await get(app, url, bearer(SECRETS.alice))).body.status).toBe('working');
    expect((await get(app, '/tasks', bearer(SECRETS.alice))).body.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([accepted.body.task_id]);
    expect((await get(app, '/tasks', bearer(SECRETS.ops))).body.tasks.map((t: { task_id: string }) => t.task_id)).toContain(accepted.body.task_id);
    expect((await app.inject({ method: 'DELETE', url, headers: bearer(SECRETS.ops) })).statusCode).toBe(200);
    expect((await get(app, `${url}?wait_ms=30000`, bearer(SECRETS.alice))).body.status).toBe('cancelled');
  });

  it("runs the task with its creator's tool allowlist", async () => {
    const accepted = await post(app, { name: 'slow', arguments: { ms: 1 } }, { ...ASYNC, ...bearer(SECRETS.bob) });
    const done = await get(app, `/tasks/${accepted.body.task_id}?wait_ms=30000`, bearer(SECRETS.bob));
    expect(done.body.result.error.code).toBe('unknown_tool');
  });
});
