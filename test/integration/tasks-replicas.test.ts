/**
 * Tasks across replicas (docs/tasks.md): app instances on one Redis share the tasks (same KEY_PREFIX);
 * replicas started as child processes are killed mid-task to show what becomes of their tasks.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { isRunning, stopAll, type Child } from '../../support/children.ts';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { startReplica } from '../helpers/replicas.ts';
import { comparable, until } from '../helpers/tasks.ts';
import { aborted, started } from '../helpers/tools.ts';

const TASK_LEASE_MS = 1000;
const LEDGER_LEASE_MS = 400;
const ASYNC = { prefer: 'respond-async' };

/** Runs of this process's versions of the child's tools, by tag. */
const runs = new Map<string, number>();

function registerChildTools(registry: SourceRegistry): void {
  const parameters = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };
  const handler = (params: Record<string, unknown>) => {
    runs.set(String(params.tag), (runs.get(String(params.tag)) ?? 0) + 1);
    return ok({ where: 'test process' }, 'done here');
  };
  const idempotency = { strategy: 'auto', scope: 'global' } as const;
  registry.registerTool({ name: 'task_charge', description: 'Charges once; quick here.', parameters, idempotency, on_lost: 'rerun', handler });
  registry.registerTool({ name: 'task_once', description: 'No idempotency; quick here.', parameters, handler });
  registry.registerTool({ name: 'task_crash', description: 'Harmless here.', parameters, idempotency, on_lost: 'rerun', handler });
}

/** A toolport replica in a child process, loading the task fixture plugin; resolves once it is ready. */
function startTaskReplica(env: Record<string, string>, marks: string): Promise<{ child: Child; port: number }> {
  return startReplica('toolport replica', { ...env, TOOL_PLUGINS: 'test/fixtures/task-plugin.ts', TASK_TEST_MARKS: marks });
}

function marksFile(): string {
  return path.join(mkdtempSync(path.join(tmpdir(), 'tasks-')), 'started');
}

/** How many times a handler in a child noted `tag`. */
function marked(marks: string, tag: string): number {
  return existsSync(marks)
    ? readFileSync(marks, 'utf8')
        .split('\n')
        .filter((line) => line === tag).length
    : 0;
}

async function startTaskIn(port: number, tool: string, tag: string): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...ASYNC },
    body: JSON.stringify({ name: tool, arguments: { tag } }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { task_id: string }).task_id;
}

const exited = (child: Child) => until(`${child.name} exits`, () => !isRunning(child), 30_000);

describe('tasks across replicas (redis)', () => {
  const prefix = `tasks-${randomUUID().slice(0, 8)}:`;
  const env = { KEY_PREFIX: prefix, TASK_LEASE_MS: String(TASK_LEASE_MS), LEDGER_LEASE_MS: String(LEDGER_LEASE_MS) };
  let a: FastifyInstance;
  let b: FastifyInstance;
  beforeAll(async () => {
    [a, b] = await Promise.all([makeApp('redis', { env, register: registerChildTools }), makeApp('redis', { env, register: registerChildTools })]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close(), stopAll()]);
  });

  it('runs a long task on A while B answers for it, polled and long-polled, with the synchronous result', async () => {
    const call = { name: 'slow', arguments: { ms: 1500, tag: 'a long task' } };
    const begun = Date.now();
    const accepted = await post(a, call, ASYNC);
    expect(accepted.status).toBe(202);
    const url = accepted.headers.location as string;
    expect((await get(b, url)).body.status).toBe('working');
    const held = await get(b, `${url}?wait_ms=30000`);
    expect(held.body.status).toBe('completed');
    expect(Date.now() - begun).toBeGreaterThanOrEqual(1500);
    const sync = await post(b, call);
    expect(comparable(held.body.result)).toEqual(comparable({ ...sync.body, id: held.body.result.id }));
    expect((await get(a, url)).body).toEqual(held.body);
  });

  it('aborts the handler on A within a second of a cancel sent to B', async () => {
    const accepted = await post(a, { name: 'watch_abort', arguments: {} }, ASYNC);
    await until('the handler starts on A', () => started.has(accepted.body.call_id));
    const cancelledAt = Date.now();
    expect((await b.inject({ method: 'DELETE', url: `/tasks/${accepted.body.task_id}` })).statusCode).toBe(200);
    const abortedAt = await until('the handler is aborted', () => aborted.get(accepted.body.call_id));
    expect(abortedAt - cancelledAt).toBeLessThan(1000);
    expect((await get(b, `/tasks/${accepted.body.task_id}?wait_ms=30000`)).body).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });

  it('finishes 100 tasks started at once on both replicas, each read on the other, losing none', async () => {
    const accepted = await Promise.all(
      Array.from({ length: 100 }, (_, i) => post(i % 2 ? a : b, { name: 'slow', arguments: { ms: 100, tag: `r${i}` } }, ASYNC)),
    );
    expect(accepted.every((r) => r.status === 202)).toBe(true);
    const done = await Promise.all(accepted.map((r, i) => get(i % 2 ? b : a, `/tasks/${r.body.task_id}?wait_ms=30000`)));
    expect(done.map((d) => d.body.status)).toEqual(Array(100).fill('completed'));
    expect(done.map((d) => d.body.result.value.tag)).toEqual(accepted.map((_, i) => `r${i}`));
  });

  describe('a replica killed mid-task', () => {
    let replica: { child: Child; port: number };
    let marks: string;
    beforeAll(async () => {
      marks = marksFile();
      replica = await startTaskReplica(env, marks);
    }, 120_000);

    it('ends a non-idempotent task worker_lost within its lease, and runs an idempotent one again elsewhere with one effect', async () => {
      const once = `once-${randomUUID()}`;
      const charge = `charge-${randomUUID()}`;
      const onceTask = await startTaskIn(replica.port, 'task_once', once);
      const chargeTask = await startTaskIn(replica.port, 'task_charge', charge);
      await until('both handlers start in the child', () => marked(marks, once) === 1 && marked(marks, charge) === 1);
      expect((await get(b, `/tasks/${onceTask}`)).body.status).toBe('working');

      replica.child.proc.kill('SIGKILL');
      const lost = await get(a, `/tasks/${onceTask}?wait_ms=30000`);
      expect(lost.body).toMatchObject({ status: 'failed', attempts: 1, error: { code: 'worker_lost' } });
      expect(lost.body.result).toBeUndefined();
      expect(runs.get(once)).toBeUndefined();

      const rerun = await get(b, `/tasks/${chargeTask}?wait_ms=30000`);
      expect(rerun.body).toMatchObject({ status: 'completed', attempts: 2, result: { success: true, value: { where: 'test process' } } });
      expect(runs.get(charge)).toBe(1);
      // The ledger holds the one effect: the same call now replays it.
      const replay = await post(a, { name: 'task_charge', arguments: { tag: charge } });
      expect(replay.body).toMatchObject({ replayed: true, effect_id: rerun.body.result.effect_id });
      expect(runs.get(charge)).toBe(1);
    });
  });
});

describe('task limits across replicas (redis)', () => {
  it('runs a queued task on whichever replica frees a slot first, oldest first', async () => {
    const env = { KEY_PREFIX: `slots-${randomUUID().slice(0, 8)}:`, TASK_CONCURRENCY: '1' };
    const [a, b] = await Promise.all([makeApp('redis', { env }), makeApp('redis', { env })]);
    try {
      // B's one slot is taken first, so what A cannot run waits for B.
      const onB = (await post(b, { name: 'watch_abort', arguments: {} }, ASYNC)).body;
      const onA = (await post(a, { name: 'watch_abort', arguments: {} }, ASYNC)).body;
      const queued: Record<string, any>[] = [];
      for (let i = 0; i < 2; i++) queued.push((await post(a, { name: 'watch_abort', arguments: {} }, ASYNC)).body);
      expect([onB.queued, onA.queued, ...queued.map((t) => t.queued)]).toEqual([false, false, true, true]);
      await until('the running handlers start', () => started.has(onA.call_id) && started.has(onB.call_id));

      await b.inject({ method: 'DELETE', url: `/tasks/${onB.task_id}` });
      await until('B takes the oldest queued task', () => started.has(queued[0]!.call_id));
      expect((await get(a, `/tasks/${queued[0]!.task_id}`)).body).toMatchObject({ status: 'working', queued: false, attempts: 1 });
      expect((await get(b, `/tasks/${queued[1]!.task_id}`)).body).toMatchObject({ status: 'working', queued: true, attempts: 0 });
      expect(started.has(queued[1]!.call_id)).toBe(false);

      await a.inject({ method: 'DELETE', url: `/tasks/${onA.task_id}` });
      await until('A takes the next one', () => started.has(queued[1]!.call_id));
      for (const task of queued) await a.inject({ method: 'DELETE', url: `/tasks/${task.task_id}` });
      for (const task of queued) expect((await get(b, `/tasks/${task.task_id}?wait_ms=30000`)).body.status).toBe('cancelled');
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it('still cancels a task on a replica whose signal connection dropped while the cancel was sent', async () => {
    // A lease this long renews (and reads the cancel mark) every 20 s: only the signal can be in time.
    const prefix = `durable-${randomUUID().slice(0, 8)}:`;
    const app = await makeApp('redis', { env: { KEY_PREFIX: prefix, TASK_LEASE_MS: '60000' } });
    const admin = new Redis(inject('redisUrl'));
    try {
      const task = (await post(app, { name: 'watch_abort', arguments: {} }, ASYNC)).body;
      await until('the handler starts', () => started.has(task.call_id));
      const clients = (await admin.client('LIST')) as string;
      const reader = clients.split('\n').find((line) => line.includes(` name=${prefix}{tasks}:signals `));
      expect(reader).toBeDefined();
      await admin.client('KILL', 'ID', /(?:^| )id=(\d+)/.exec(reader!)![1]!);
      const cancelledAt = Date.now();
      expect((await app.inject({ method: 'DELETE', url: `/tasks/${task.task_id}` })).statusCode).toBe(200);
      const abortedAt = await until('the handler is aborted', () => aborted.get(task.call_id));
      expect(abortedAt - cancelledAt).toBeLessThan(5000);
      expect((await get(app, `/tasks/${task.task_id}?wait_ms=30000`)).body).toMatchObject({ status: 'cancelled' });
    } finally {
      admin.disconnect();
      await app.close();
    }
  });

  describe('a tool that kills every replica that runs it', () => {
    const prefix = `crash-${randomUUID().slice(0, 8)}:`;
    const env = { KEY_PREFIX: prefix, TASK_LEASE_MS: String(TASK_LEASE_MS), TASK_MAX_ATTEMPTS: '2' };
    let replicas: { child: Child; port: number }[];
    let marks: string;
    beforeAll(async () => {
      marks = marksFile();
      replicas = await Promise.all([startTaskReplica(env, marks), startTaskReplica(env, marks)]);
    }, 180_000);
    afterAll(() => stopAll());

    it('is attempted TASK_MAX_ATTEMPTS times, then ends failed worker_lost instead of taking down the next replica', async () => {
      const tag = `crash-${randomUUID()}`;
      const taskId = await startTaskIn(replicas[0]!.port, 'task_crash', tag);
      await exited(replicas[0]!.child);
      // The other replica takes the task over once the lease lapses, and dies of it too.
      await exited(replicas[1]!.child);
      expect(marked(marks, tag)).toBe(2);

      // A replica that would run it harmlessly is not given it: two attempts were all it had.
      const survivor = await makeApp('redis', { env, register: registerChildTools });
      try {
        const ended = await get(survivor, `/tasks/${taskId}?wait_ms=30000`);
        expect(ended.body).toMatchObject({ status: 'failed', attempts: 2, queued: false, error: { code: 'worker_lost' } });
        expect(ended.body.error.detail).toContain('attempted 2 times');
        expect(runs.get(tag)).toBeUndefined();
      } finally {
        await survivor.close();
      }
    });
  });
});
