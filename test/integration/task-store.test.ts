/**
 * The task store's lease rules, the same on both backends: a lapsed lease is taken over once, a
 * rerunnable task changes runner, any other ends worker_lost, a cancel asked for wins, and the
 * runner that lost its task can neither renew nor finish it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryTaskStore } from '../../src/store/memory/tasks.ts';
import { RedisTaskStore } from '../../src/store/redis/tasks.ts';
import type { NewTask, TaskSignal, TaskStore } from '../../src/store/tasks.ts';
import { newTaskId } from '../../src/tasks/view.ts';

const OUTCOMES = { lost: '{"error":{"code":"worker_lost"}}', cancelled: '{"error":{"code":"cancelled"}}' };
const LEASE_MS = 400;

function newTask(overrides: Partial<NewTask> = {}): NewTask {
  return { id: newTaskId(), owner: 'alice', head: '{"tool":"t"}', job: '{"calls":[]}', rerunnable: false, runner: 'r1', leaseMs: LEASE_MS, keepMs: 60_000, ...overrides };
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
    store.onSignal((signal, id) => signals.push([signal, id]));
    await sleep(100); // the signal connection subscribes
  });
  afterAll(async () => {
    await store.close();
    client?.disconnect();
  });

  async function signalled(signal: TaskSignal, id: string): Promise<boolean> {
    for (let i = 0; i < 40; i++) {
      if (signals.some(([s, i2]) => s === signal && i2 === id)) return true;
      await sleep(25);
    }
    return false;
  }

  it('keeps a renewed lease alive and lets its runner finish, once', async () => {
    const task = newTask();
    await store.create(task);
    expect(await store.get(task.id)).toMatchObject({ status: 'working', owner: 'alice', head: task.head, outcome: null });
    await sleep(LEASE_MS / 2);
    expect(await store.renew(task.id, 'r1', LEASE_MS)).toBe('ok');
    await sleep(LEASE_MS / 2 + 20);
    expect(await store.lapsed(1000)).not.toContain(task.id);
    await store.progress(task.id, 'r1', '{"done":1}');
    expect(await store.finish(task.id, 'r2', 'completed', '{"result":1}', 60_000)).toBe(false);
    expect(await store.finish(task.id, 'r1', 'completed', '{"result":1}', 60_000)).toBe(true);
    expect(await store.finish(task.id, 'r1', 'failed', '{"error":{}}', 60_000)).toBe(false);
    expect(await store.get(task.id)).toMatchObject({ status: 'completed', progress: '{"done":1}', outcome: '{"result":1}' });
    expect(await signalled('ended', task.id)).toBe(true);
    expect(await store.renew(task.id, 'r1', LEASE_MS)).toBe('lost');
    expect(await store.requestCancel(task.id)).toBe(false);
  });

  it('hands a lapsed rerunnable task to one replica, after which the old runner has lost it', async () => {
    const task = newTask({ rerunnable: true });
    await store.create(task);
    expect(await store.takeOver(task.id, 'r2', LEASE_MS, 60_000, OUTCOMES)).toEqual({ kind: 'alive' });
    await sleep(LEASE_MS + 30);
    expect(await store.lapsed(1000)).toContain(task.id);
    const [first, second] = await Promise.all([store.takeOver(task.id, 'r2', LEASE_MS, 60_000, OUTCOMES), store.takeOver(task.id, 'r3', LEASE_MS, 60_000, OUTCOMES)]);
    expect([first, second]).toContainEqual({ kind: 'run', job: task.job });
    expect([first, second]).toContainEqual({ kind: 'alive' });
    expect(await store.renew(task.id, 'r1', LEASE_MS)).toBe('lost');
    expect(await store.finish(task.id, 'r1', 'completed', '{"result":"late"}', 60_000)).toBe(false);
    expect((await store.get(task.id))!.status).toBe('working');
  });

  it('ends a lapsed task that is not rerunnable worker_lost, and a cancelled one cancelled', async () => {
    const lost = newTask();
    const cancelled = newTask({ rerunnable: true });
    await Promise.all([store.create(lost), store.create(cancelled)]);
    expect(await store.requestCancel(cancelled.id)).toBe(true);
    expect(await signalled('cancel', cancelled.id)).toBe(true);
    expect(await store.renew(cancelled.id, 'r1', 0)).toBe('cancel');
    await sleep(LEASE_MS + 30);
    expect(await store.takeOver(lost.id, 'r2', LEASE_MS, 60_000, OUTCOMES)).toEqual({ kind: 'ended' });
    expect(await store.takeOver(cancelled.id, 'r2', LEASE_MS, 60_000, OUTCOMES)).toEqual({ kind: 'ended' });
    expect(await store.get(lost.id)).toMatchObject({ status: 'failed', outcome: OUTCOMES.lost });
    expect(await store.get(cancelled.id)).toMatchObject({ status: 'cancelled', outcome: OUTCOMES.cancelled });
    expect(await store.lapsed(1000)).not.toContain(lost.id);
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
    await sleep(200);
    expect(await store.get(ids[0]!)).toBeNull();
    expect((await store.list({ owner }, null, 10)).records.map((r) => r.id)).toEqual([ids[2], ids[1]]);
  });
});
