/**
 * The task store's rules, the same on both backends: a lapsed lease is taken over once, a rerunnable
 * task goes back to the queue until it has been attempted as often as allowed, any other ends
 * worker_lost, a cancel asked for wins, the runner that lost its task can neither renew nor finish
 * it, and queued tasks are claimed oldest first.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryTaskStore } from '../../src/store/memory/tasks.ts';
import { RedisTaskStore } from '../../src/store/redis/tasks.ts';
import type { NewTask, TaskSignal, TaskStore } from '../../src/store/tasks.ts';
import { newTaskId } from '../../src/tasks/view.ts';
import { until } from '../helpers/tasks.ts';

const OUTCOMES = {
  lost: '{"error":{"code":"worker_lost"}}',
  exhausted: '{"error":{"code":"worker_lost","detail":"attempts"}}',
  cancelled: '{"error":{"code":"cancelled"}}',
};
const LEASE_MS = 400;

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return {
    id: newTaskId(),
    owner: 'alice',
    head: '{"tool":"t"}',
    job: '{"calls":[]}',
    rerunnable: false,
    runner: 'r1',
    leaseMs: LEASE_MS,
    keepMs: 60_000,
    ...overrides,
  };
}

describe.each(['memory', 'redis'] as const)('task store (%s)', (kind) => {
  let store: TaskStore;
  let client: Redis | null = null;
  const signals: [TaskSignal, string][] = [];
  beforeAll(async () => {
    if (kind === 'memory') store = new MemoryTaskStore();
    else {
      client = new Redis(inject('redisUrl'));
      await new Promise((resolve) => client!.once('ready', resolve));
      store = new RedisTaskStore(client, `store-${randomUUID().slice(0, 8)}:`, (command) => command(), pino({ level: 'silent' }));
    }
    await store.onSignal((signal, id) => signals.push([signal, id]));
  });
  afterAll(async () => {
    await store.close();
    client?.disconnect();
  });

  const signalled = (signal: TaskSignal, id: string) => until(`signal ${signal} for ${id}`, () => signals.some(([s, i]) => s === signal && i === id));
  const lapsed = (id: string) => until(`the lease of ${id} lapses`, async () => (await store.lapsed(1000)).includes(id));

  it('keeps a renewed lease alive and lets its runner finish, once', async () => {
    const task = newTask({ leaseMs: 60_000 });
    await store.create(task);
    expect(await store.get(task.id)).toMatchObject({ status: 'working', owner: 'alice', head: task.head, outcome: null, attempts: 1, queued: false });
    expect(await store.renew(task.id, 'r1', 60_000)).toBe('ok');
    expect(await store.lapsed(1000)).not.toContain(task.id);
    expect(await store.takeOver(task.id, 3, 60_000, OUTCOMES)).toBe('alive');
    await store.progress(task.id, 'r1', '{"done":1}');
    expect(await store.finish(task.id, 'r2', 'completed', '{"result":1}', 60_000)).toBe(false);
    expect(await store.finish(task.id, 'r1', 'completed', '{"result":1}', 60_000)).toBe(true);
    expect(await store.finish(task.id, 'r1', 'failed', '{"error":{}}', 60_000)).toBe(false);
    expect(await store.get(task.id)).toMatchObject({ status: 'completed', progress: '{"done":1}', outcome: '{"result":1}' });
    await signalled('ended', task.id);
    expect(await store.renew(task.id, 'r1', LEASE_MS)).toBe('lost');
    expect(await store.requestCancel(task.id, OUTCOMES.cancelled, 60_000)).toBe(false);
  });

  it('puts a lapsed rerunnable task back in the queue once; one replica claims it, after which the old runner has lost it', async () => {
    const task = newTask({ rerunnable: true });
    await store.create(task);
    await lapsed(task.id);
    const both = await Promise.all([store.takeOver(task.id, 3, 60_000, OUTCOMES), store.takeOver(task.id, 3, 60_000, OUTCOMES)]);
    expect(both.sort()).toEqual(['alive', 'queued']);
    await signalled('queued', task.id);
    expect(await store.get(task.id)).toMatchObject({ status: 'working', queued: true, attempts: 1 });
    expect(await store.lapsed(1000)).not.toContain(task.id);
    expect(await store.renew(task.id, 'r1', LEASE_MS)).toBe('lost');
    expect(await store.finish(task.id, 'r1', 'completed', '{"result":"late"}', 60_000)).toBe(false);

    const claims = await Promise.all([store.claim('r2', 60_000), store.claim('r3', 60_000)]);
    expect(claims.filter((c) => c !== null)).toEqual([{ id: task.id, job: task.job }]);
    const runner = claims[0] === null ? 'r3' : 'r2';
    expect(await store.get(task.id)).toMatchObject({ status: 'working', queued: false, attempts: 2 });
    expect(await store.renew(task.id, runner, 60_000)).toBe('ok');
    expect(await store.finish(task.id, runner, 'completed', '{"result":"again"}', 60_000)).toBe(true);
  });

  it('ends a rerunnable task worker_lost once it has been attempted as often as allowed', async () => {
    const task = newTask({ rerunnable: true, leaseMs: 1 });
    await store.create(task);
    await lapsed(task.id);
    expect(await store.takeOver(task.id, 2, 60_000, OUTCOMES)).toBe('queued');
    expect(await store.claim('r2', 1)).toEqual({ id: task.id, job: task.job });
    await lapsed(task.id);
    expect(await store.takeOver(task.id, 2, 60_000, OUTCOMES)).toBe('ended');
    expect(await store.get(task.id)).toMatchObject({ status: 'failed', outcome: OUTCOMES.exhausted, attempts: 2, queued: false });
    await signalled('ended', task.id);
  });

  it('ends a lapsed task that is not rerunnable worker_lost, and a cancelled one cancelled', async () => {
    const lost = newTask({ leaseMs: 1 });
    const cancelled = newTask({ rerunnable: true, leaseMs: 1 });
    await Promise.all([store.create(lost), store.create(cancelled)]);
    expect(await store.requestCancel(cancelled.id, OUTCOMES.cancelled, 60_000)).toBe(true);
    await signalled('cancel', cancelled.id);
    expect(await store.renew(cancelled.id, 'r1', 0)).toBe('cancel');
    await Promise.all([lapsed(lost.id), lapsed(cancelled.id)]);
    expect(await store.takeOver(lost.id, 3, 60_000, OUTCOMES)).toBe('ended');
    expect(await store.takeOver(cancelled.id, 3, 60_000, OUTCOMES)).toBe('ended');
    expect(await store.get(lost.id)).toMatchObject({ status: 'failed', outcome: OUTCOMES.lost });
    expect(await store.get(cancelled.id)).toMatchObject({ status: 'cancelled', outcome: OUTCOMES.cancelled });
    expect(await store.lapsed(1000)).not.toContain(lost.id);
  });

  it('queues tasks without a runner, hands them out oldest first, and ends a cancelled queued task at once', async () => {
    // Drain what earlier tests left queued.
    while ((await store.claim('drain', 60_000)) !== null);
    const ids = [0, 1, 2].map((i) => newTaskId(Date.now() + i));
    for (const id of [ids[2]!, ids[0]!, ids[1]!]) await store.create(newTask({ id, runner: null }));
    await signalled('queued', ids[1]!);
    expect(await store.get(ids[0]!)).toMatchObject({ status: 'working', queued: true, attempts: 0 });
    expect(await store.lapsed(1000)).not.toContain(ids[0]);

    expect(await store.requestCancel(ids[1]!, OUTCOMES.cancelled, 60_000)).toBe(true);
    expect(await store.get(ids[1]!)).toMatchObject({ status: 'cancelled', queued: false, outcome: OUTCOMES.cancelled });
    await signalled('ended', ids[1]!);

    expect((await store.claim('r2', 60_000))?.id).toBe(ids[0]);
    expect(await store.get(ids[0]!)).toMatchObject({ status: 'working', queued: false, attempts: 1 });
    expect((await store.claim('r3', 60_000))?.id).toBe(ids[2]);
    expect(await store.claim('r3', 60_000)).toBeNull();
    expect(await store.finish(ids[2]!, 'r3', 'completed', '{"result":null}', 60_000)).toBe(true);
  });

  it('lists an owner’s tasks newest first, every task for "all", and forgets a task after its TTL', async () => {
    const owner = `o-${randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const task = newTask({ owner, id: newTaskId(Date.now() + i) });
      ids.push(task.id);
      await store.create(task);
    }
    const page = await store.list({ owner }, null, 2);
    expect(page.records.map((r) => r.id)).toEqual([ids[2], ids[1]]);
    expect((await store.list({ owner }, page.next, 2)).records.map((r) => r.id)).toEqual([ids[0]]);
    expect((await store.list('all', null, 1000)).records.map((r) => r.id)).toEqual(expect.arrayContaining(ids));
    expect(await store.finish(ids[0]!, 'r1', 'completed', '{"result":null}', 100)).toBe(true);
    await until('the ended task expires', async () => (await store.get(ids[0]!)) === null);
    expect((await store.list({ owner }, null, 10)).records.map((r) => r.id)).toEqual([ids[2], ids[1]]);
  });
});
