/** The code mode sandbox on its own (src/builtin/code/): the worker's program, its host calls, and the context they run in. */
import { AsyncLocalStorage } from 'node:async_hooks';
import { describe, expect, it } from 'vitest';
import { runProgramInWorker, setMaxWorkers, warmUp } from '../../src/builtin/code/runner.ts';
import type { CallAnswer } from '../../src/builtin/code/sandbox.ts';

const limits = () => ({ memoryBytes: 32 * 1024 * 1024, deadline: Date.now() + 5000, maxCalls: 10 });

describe('a program in its worker', () => {
  it('makes its host calls in the async context of the call that started it (its span, its request)', async () => {
    warmUp(); // the worker starts outside the call's context, as the service's does
    const storage = new AsyncLocalStorage<string>();
    const seen: (string | undefined)[] = [];
    const host = {
      call: (name: string, args: string): Promise<CallAnswer> => {
        seen.push(storage.getStore());
        return Promise.resolve({ ok: true, json: JSON.stringify({ name, args: JSON.parse(args) as unknown }) });
      },
      log: () => undefined,
    };
    const outcome = await storage.run(
      'the code_run call',
      () => runProgramInWorker('return await Promise.all([tools.a({ x: 1 }), tools.b()]);', host, limits()).outcome,
    );
    expect(outcome).toEqual({ kind: 'returned', json: '[{"name":"a","args":{"x":1}},{"name":"b","args":{}}]' });
    expect(seen).toEqual(['the code_run call', 'the code_run call']);
  });

  it('stops a program on request, even one that never yields', async () => {
    const running = runProgramInWorker('for (;;) {}', { call: () => Promise.resolve({ ok: true, json: '1' }), log: () => undefined }, limits());
    setTimeout(() => running.stop(), 100);
    const started = Date.now();
    expect(await running.outcome).toEqual({ kind: 'stopped' });
    expect(Date.now() - started).toBeLessThan(4000);
  });

  it('runs at most CODE_WORKERS programs at once: the others wait for a worker within their deadline', async () => {
    setMaxWorkers(1);
    try {
      let release!: (answer: CallAnswer) => void;
      const blocking = { call: () => new Promise<CallAnswer>((resolve) => (release = resolve)), log: () => undefined };
      const first = runProgramInWorker('return await tools.wait();', blocking, limits());
      const quick = { call: () => Promise.resolve<CallAnswer>({ ok: true, json: '2' }), log: () => undefined };
      const late = runProgramInWorker('return 1;', quick, { ...limits(), deadline: Date.now() + 300 });
      expect(await late.outcome).toMatchObject({ kind: 'limit', limit: 'time' });
      const second = runProgramInWorker('return await tools.two();', quick, limits());
      await new Promise((resolve) => setTimeout(resolve, 200));
      release({ ok: true, json: '1' });
      expect(await first.outcome).toEqual({ kind: 'returned', json: '1' });
      expect(await second.outcome).toEqual({ kind: 'returned', json: '2' });
    } finally {
      setMaxWorkers(8);
    }
  });
});
