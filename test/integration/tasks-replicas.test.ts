/**
 * Tasks across replicas (SPEC §11): two app instances on one Redis share the tasks (same KEY_PREFIX);
 * a replica started as a child process is killed mid-task to show what becomes of its tasks.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { http200, startChild, stopAll, waitUntilReady, type Child } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';
import { ok } from '../../src/tools/define.ts';
import type { ToolRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { comparable } from '../helpers/tasks.ts';
import { aborted } from '../helpers/tools.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TASK_LEASE_MS = 1000;
const LEDGER_LEASE_MS = 400;
const ASYNC = { prefer: 'respond-async' };

/** Runs of this process's versions of the child's tools, by tag. */
const runs = new Map<string, number>();

function registerChildTools(registry: ToolRegistry): void {
  const parameters = { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] };
  const handler = (params: Record<string, unknown>) => {
    runs.set(String(params.tag), (runs.get(String(params.tag)) ?? 0) + 1);
    return ok({ where: 'test process' }, 'done here');
  };
  registry.registerTool({ name: 'task_charge', description: 'Charges once; quick here.', parameters, idempotency: { strategy: 'auto', scope: 'global' }, handler });
  registry.registerTool({ name: 'task_once', description: 'No idempotency; quick here.', parameters, handler });
}

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

  it('runs a 3 s task on A while B answers for it, polled and long-polled, with the synchronous result', async () => {
    const call = { name: 'slow', arguments: { ms: 3000, tag: 'three seconds' } };
    const started = Date.now();
    const accepted = await post(a, call, ASYNC);
    expect(accepted.status).toBe(202);
    const url = accepted.headers.location as string;
    await sleep(200);
    expect((await get(b, url)).body.status).toBe('working');
    const held = await get(b, `${url}?wait_ms=10000`);
    const answeredAfter = Date.now() - started;
    expect(held.body.status).toBe('completed');
    expect(answeredAfter).toBeGreaterThanOrEqual(3000);
    expect(answeredAfter).toBeLessThan(3900); // the end reached B by its signal, not by a late re-read
    const sync = await post(b, call);
    expect(comparable(held.body.result)).toEqual(comparable({ ...sync.body, id: held.body.result.id }));
    expect((await get(a, url)).body).toEqual(held.body);
  });

  it('aborts the handler on A within a second of a cancel sent to B', async () => {
    const accepted = await post(a, { name: 'watch_abort', arguments: {} }, ASYNC);
    await sleep(200);
    const cancelledAt = Date.now();
    expect((await b.inject({ method: 'DELETE', url: `/tasks/${accepted.body.task_id}` })).statusCode).toBe(200);
    for (let i = 0; i < 40 && !aborted.has(accepted.body.call_id); i++) await sleep(25);
    expect(aborted.get(accepted.body.call_id)! - cancelledAt).toBeLessThan(1000);
    expect((await get(b, `/tasks/${accepted.body.task_id}?wait_ms=2000`)).body).toMatchObject({ status: 'cancelled', error: { code: 'cancelled' } });
  });

  it('finishes 100 tasks started at once on both replicas, each read on the other, losing none', async () => {
    const accepted = await Promise.all(Array.from({ length: 100 }, (_, i) => post(i % 2 ? a : b, { name: 'slow', arguments: { ms: 100, tag: `r${i}` } }, ASYNC)));
    expect(accepted.every((r) => r.status === 202)).toBe(true);
    const done = await Promise.all(accepted.map((r, i) => get(i % 2 ? b : a, `/tasks/${r.body.task_id}?wait_ms=15000`)));
    expect(done.map((d) => d.body.status)).toEqual(Array(100).fill('completed'));
    expect(done.map((d) => d.body.result.value.tag)).toEqual(accepted.map((_, i) => `r${i}`));
  });

  describe('a replica killed mid-task', () => {
    let child: Child;
    let port: number;
    let marks: string;
    beforeAll(async () => {
      marks = path.join(mkdtempSync(path.join(tmpdir(), 'tasks-')), 'started');
      [port] = (await freePorts(1)) as [number];
      child = startChild('toolport replica', process.execPath, ['--import', 'tsx', 'src/server.ts'], {
        cwd: ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          PORT: String(port),
          REDIS_URL: inject('redisUrl'),
          ...env,
          LOG_LEVEL: 'warn',
          TOOL_PLUGINS: 'test/fixtures/task-plugin.ts',
          TASK_TEST_MARKS: marks,
        },
      });
      // A child's start (tsx compiling the sources) takes tens of seconds on a loaded machine.
      await waitUntilReady(child, 'GET /readyz → 200', http200(`http://127.0.0.1:${port}/readyz`), 90_000);
    }, 120_000);

    /** Starts the tool as a task on the child and waits until its handler runs there. */
    async function startInChild(tool: string, tag: string): Promise<string> {
      const response = await fetch(`http://127.0.0.1:${port}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...ASYNC },
        body: JSON.stringify({ name: tool, arguments: { tag } }),
      });
      expect(response.status).toBe(202);
      const task = (await response.json()) as { task_id: string };
      for (let i = 0; i < 200 && !(existsSync(marks) && readFileSync(marks, 'utf8').includes(tag)); i++) await sleep(20);
      expect(readFileSync(marks, 'utf8')).toContain(tag);
      return task.task_id;
    }

    it('ends a non-idempotent task worker_lost within its lease, and runs an idempotent one again elsewhere with one effect', async () => {
      const once = `once-${randomUUID()}`;
      const charge = `charge-${randomUUID()}`;
      const onceTask = await startInChild('task_once', once);
      const chargeTask = await startInChild('task_charge', charge);
      expect((await get(b, `/tasks/${onceTask}`)).body.status).toBe('working');

      child.proc.kill('SIGKILL');
      const killedAt = Date.now();
      const lost = await get(a, `/tasks/${onceTask}?wait_ms=10000`);
      expect(lost.body).toMatchObject({ status: 'failed', error: { code: 'worker_lost' } });
      expect(lost.body.result).toBeUndefined();
      // The lease lapses at most TASK_LEASE_MS after its last renewal; a sweep runs every half lease.
      expect(Date.now() - killedAt).toBeLessThan(TASK_LEASE_MS * 2 + 500);
      expect(runs.get(once)).toBeUndefined();

      const rerun = await get(b, `/tasks/${chargeTask}?wait_ms=10000`);
      expect(rerun.body).toMatchObject({ status: 'completed', result: { success: true, value: { where: 'test process' } } });
      expect(runs.get(charge)).toBe(1);
      // The ledger holds the one effect: the same call now replays it.
      const replay = await post(a, { name: 'task_charge', arguments: { tag: charge } });
      expect(replay.body).toMatchObject({ replayed: true, effect_id: rerun.body.result.effect_id });
      expect(runs.get(charge)).toBe(1);
    });
  });
});
