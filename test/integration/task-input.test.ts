/**
 * Tasks that wait for input (an approval, a client's answers), the same on both stores: a run whose
 * result carries `approval` or `input_requests` holds the task in input_required instead of
 * completing it; no replica runs it meanwhile; `resume` from any replica runs it again with the
 * answers in its scope; a task waiting for input is cancelled at once.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MemoryTaskStore } from '../../src/store/memory/tasks.ts';
import { RedisTaskStore } from '../../src/store/redis/tasks.ts';
import type { TaskStore } from '../../src/store/tasks.ts';
import { TaskRunner } from '../../src/tasks/runner.ts';
import { viewOf, type TaskJob } from '../../src/tasks/view.ts';
import type { InvocationScope } from '../../src/tools/invoke.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { NO_TRACING } from '../../src/tracing/index.ts';

const log = pino({ level: 'silent' });

/** An approval gate as the policy stage would answer it: held until an answer says yes. */
function gated(runs: InvocationScope[]) {
  return async (_job: TaskJob, scope: InvocationScope): Promise<object> => {
    runs.push(scope);
    if (scope.options.inputResponses?.confirm === undefined) {
      return {
        success: false,
        error: { code: 'approval_required', detail: 'held' },
        approval: { id: 'ap-1', url: '/approvals/ap-1', status: 'pending' },
        input_requests: {
          confirm: { method: 'elicitation/create', params: { mode: 'form', message: 'Approve?', requestedSchema: { type: 'object', properties: {} } } },
        },
      };
    }
    return { success: true, error: null, value: { answered: scope.options.inputResponses } };
  };
}

describe.each(['memory', 'redis'] as const)('tasks waiting for input (%s)', (kind) => {
  let store: TaskStore;
  let client: Redis | null = null;
  const runners: TaskRunner[] = [];
  const runs: InvocationScope[] = [];
  beforeAll(async () => {
    if (kind === 'memory') store = new MemoryTaskStore();
    else {
      client = new Redis(inject('redisUrl'));
      await new Promise((resolve) => client!.once('ready', resolve));
      store = new RedisTaskStore(client, `input-${randomUUID().slice(0, 8)}:`, (command) => command(), log);
    }
    for (let i = 0; i < 2; i++) {
      runners.push(
        new TaskRunner({
          store,
          registry: new ToolRegistry(),
          execute: gated(runs),
          accessOf: (job) => {
            if (job.caller === 'gone') throw new Error('the key of this task was revoked');
            return { principal: null };
          },
          ttlS: 60,
          timeoutMs: 60_000,
          leaseMs: 60_000,
          maxAttempts: 3,
          concurrency: 4,
          log,
          tracer: NO_TRACING,
        }),
      );
    }
    await Promise.all(runners.map((r) => r.listening));
  });
  afterAll(async () => {
    await Promise.all(runners.map((r) => r.close()));
    await store.close();
    client?.disconnect();
  });

  const job = (): TaskJob => ({
    format: 'native',
    turn: false,
    calls: [{ id: `call_${randomUUID()}`, name: 'pay', arguments: {}, parsed: true }],
    sessionId: null,
    caller: 'agent',
    timeoutMs: null,
    receivedAt: Date.now(),
    requestId: 'r1',
  });

  it('holds a run that asks for input, and runs it again, anywhere, with the answers once resumed', async () => {
    const task = await runners[0]!.start(job());
    const held = (await runners[0]!.wait(task.task_id, 20_000))!;
    expect(held.status).toBe('input_required');
    const view = viewOf(held);
    expect(view).toMatchObject({ status: 'input_required', approval: { id: 'ap-1' }, input_requests: { confirm: { method: 'elicitation/create' } } });
    expect(view.result).toBeUndefined();
    expect(runs.at(-1)).toMatchObject({ options: { taskId: task.task_id } });
    expect(await store.lapsed(100)).not.toContain(task.task_id);

    // The other replica resumes it; a second resume does nothing.
    expect(await runners[1]!.resume(task.task_id, { confirm: { action: 'accept', content: {} } })).toBe(true);
    expect(await runners[1]!.resume(task.task_id, { confirm: { action: 'decline' } })).toBe(false);
    const done = (await runners[1]!.wait(task.task_id, 20_000, true))!;
    expect(done.status).toBe('completed');
    expect(viewOf(done)).toMatchObject({ result: { success: true, value: { answered: { confirm: { action: 'accept' } } } } });
    expect(viewOf(done).input_requests).toBeUndefined();
    expect(runs.at(-1)).toMatchObject({ options: { taskId: task.task_id, inputResponses: { confirm: { action: 'accept', content: {} } } } });
  });

  it('fails a task whose run cannot be set up, instead of leaving it working and its lease renewed', async () => {
    const before = runs.length;
    const task = await runners[0]!.start({ ...job(), caller: 'gone' });
    const ended = (await runners[0]!.wait(task.task_id, 20_000, true))!;
    expect(ended.status).toBe('failed');
    expect(runs.length).toBe(before);
    expect(await store.lapsed(100)).not.toContain(task.task_id);
  });

  it('cancels a task waiting for input at once', async () => {
    const task = await runners[1]!.start(job());
    expect((await runners[1]!.wait(task.task_id, 20_000))!.status).toBe('input_required');
    expect(await runners[0]!.cancel(task.task_id)).toBe(true);
    expect(await store.get(task.task_id)).toMatchObject({ status: 'cancelled', input: null });
    expect(await runners[0]!.resume(task.task_id)).toBe(false);
  });
});
