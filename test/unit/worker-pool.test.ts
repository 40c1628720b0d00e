/**
 * The worker pool as a service of its own (src/tools/isolation/pool.ts): any caller runs a module's
 * exported function in a real piscina worker with a ToolContext, not only plugin tools.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { CallContext, type NestedCalls } from '../../src/tools/context.ts';
import { WorkerPool } from '../../src/tools/isolation/pool.ts';
import { CallEnded } from '../../src/tools/race.ts';
import type { NestedResult, SessionHandle } from '../../src/tools/types.ts';

const MODULE = new URL('../fixtures/isolation/exports.ts', import.meta.url).href;
const log = pino({ level: 'silent' });
const pool = new WorkerPool({ size: 1, maxOldGenerationMb: 64, log });
afterAll(() => pool.close());

function contextWith(options: {
  progress?: (done: number) => void;
  session?: SessionHandle;
  nested?: (name: string, params: Record<string, unknown>) => NestedResult;
}) {
  const calls: NestedCalls<null> = {
    nested: async (name, params) => options.nested!(name, params),
    nestedCall: () => Promise.reject(new Error('not used here')),
  };
  return new CallContext({
    callId: 'call_1',
    toolName: 'exported',
    requestId: 'req_1',
    ledgerKey: null,
    session: options.session ?? null,
    sessionId: options.session?.id ?? null,
    deadline: Date.now() + 10_000,
    caller: null,
    user: null,
    resources: { get: () => undefined },
    log,
    calls: calls as NestedCalls<unknown>,
    scope: null,
    progress: (_callId, done) => options.progress?.(done),
  });
}

describe('WorkerPool.run', () => {
  it('runs a function the module exports, by name, in a worker', async () => {
    expect(await pool.run({ module: MODULE, export: 'double' }, { n: 21 }, contextWith({}))).toEqual({ message: 'doubled', value: 42 });
    expect(pool.threads).toBe(1);
  });

  it('delivers every progress report before the result, however fast the function returns', async () => {
    const seen: number[] = [];
    await pool.run({ module: MODULE, export: 'report' }, { count: 200 }, contextWith({ progress: (done) => seen.push(done) }));
    expect(seen).toHaveLength(200);
    expect(seen.at(-1)).toBe(200);
  });

  it("answers the worker's session reads and writes and nested calls with the caller's context", async () => {
    const state = new Map<string, unknown>();
    const session: SessionHandle = {
      id: 's1',
      get: async (key) => state.get(key) as never,
      getMany: async (keys) => keys.map((key) => state.get(key)) as never,
      set: async (key, value) => void state.set(key, value),
      delete: async (key) => void state.delete(key),
    };
    const nested: [string, Record<string, unknown>][] = [];
    const context = contextWith({
      session,
      nested: (name, params) => {
        nested.push([name, params]);
        return { success: true, message: 'inner', value: { inner: true }, error: null };
      },
    });
    expect(await pool.run({ module: MODULE, export: 'useContext' }, {}, context)).toEqual({ message: 'used', value: { seen: 1, nested: { inner: true } } });
    expect(state.get('seen')).toBe(1);
    expect(nested).toEqual([['inner', { x: 1 }]]);
  });
});

/** The nice value of each worker thread of this process (Linux: /proc/self/task/<tid>/stat). */
function workerNiceness(): number[] {
  const values: number[] = [];
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'WorkerThread') continue;
    values.push(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]));
  }
  return values;
}

describe.runIf(process.platform === 'linux')('worker priority', () => {
  it('keeps a worker at the normal priority for short calls and lowers it to nice 19 while a handler keeps running', async () => {
    const own = new WorkerPool({ size: 1, maxOldGenerationMb: 64, log });
    try {
      for (let i = 0; i < 20; i++) await own.run({ module: MODULE, export: 'double' }, { n: i }, contextWith({}));
      const before = workerNiceness();
      expect(before.length).toBeGreaterThan(0);
      expect(before.every((nice) => nice === 0)).toBe(true);
      const running = own.run({ module: MODULE, export: 'busy' }, { ms: 400 }, contextWith({}));
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(workerNiceness().filter((nice) => nice === 19)).toHaveLength(1);
      expect(await running).toEqual({ message: 'done' });
      // Raised again once the call ended where the process may (as root), else kept at 19 until the worker is replaced.
      if (process.getuid?.() === 0) expect(workerNiceness().every((nice) => nice === 0)).toBe(true);
    } finally {
      await own.close();
    }
  });
});

describe.runIf(process.platform === 'linux')('a call that ends while its handler runs', () => {
  const own = new WorkerPool({ size: 1, maxOldGenerationMb: 64, log });
  afterAll(() => own.close());
  const count = async () => ((await own.run({ module: MODULE, export: 'count' }, {}, contextWith({}))) as { value: number }).value;
  /** Runs `busy` for `ms` and ends the call `afterMs` into it, as the pipeline does; how it settled and how long after the end. */
  const endDuring = (ms: number, kind: 'cancelled' | 'deadline', afterMs = 30) => {
    const context = contextWith({});
    let endedAt = Number.NaN;
    setTimeout(() => {
      endedAt = performance.now();
      context.ended.cancel(new CallEnded(kind));
    }, afterMs);
    const settled = (outcome: string) => ({ outcome, msAfterEnd: performance.now() - endedAt });
    return own.run({ module: MODULE, export: 'busy' }, { ms }, context).then(
      () => settled('returned'),
      () => settled('aborted'),
    );
  };

  it('keeps the worker when the caller went away and the handler returns soon after', async () => {
    const first = await count();
    expect((await endDuring(60, 'cancelled')).outcome).toBe('returned');
    expect(await count()).toBe(first + 1);
  });

  it('terminates and replaces the worker when the handler keeps running after its caller went away', async () => {
    await count();
    const { outcome, msAfterEnd } = await endDuring(5000, 'cancelled');
    expect(outcome).toBe('aborted');
    expect(msAfterEnd).toBeGreaterThanOrEqual(100); // the grace
    expect(await count()).toBe(1);
  });

  it('never starts a handler whose caller went away while it waited for a worker', async () => {
    const first = await count();
    const busy = endDuring(20, 'cancelled', 1000); // holds the one worker; its call ends after it returned
    const context = contextWith({});
    const queued = own.run({ module: MODULE, export: 'count' }, {}, context);
    context.ended.cancel(new CallEnded('cancelled'));
    // Dropped from the queue after the grace, or handed to the worker, which does not start it.
    await expect(queued).rejects.toThrow();
    expect((await busy).outcome).toBe('returned');
    expect(await count()).toBe(first + 1);
  });

  it('terminates the worker at once at the deadline', async () => {
    await count();
    const { outcome, msAfterEnd } = await endDuring(5000, 'deadline');
    expect(outcome).toBe('aborted');
    expect(msAfterEnd).toBeLessThan(100); // no grace: settled in the same turn as the deadline
    expect(await count()).toBe(1);
  });
});
