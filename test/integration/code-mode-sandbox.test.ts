/**
 * The sandbox of code mode (docs/code-mode.md): every way out of it fails cleanly, as a thrown error
 * in the program or a tool-level failure, within its limit, and the service keeps answering.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { makeApp, post } from '../helpers/app.ts';

const TIME_MS = 1500;

describe('the code mode sandbox', () => {
  let app: FastifyInstance;
  let echoes = 0;
  beforeAll(async () => {
    app = await makeApp('memory', {
      env: { CODE_MODE: 'true', CODE_TIME_MS: String(TIME_MS) },
      register: (registry) => {
        registry.registerTool({
          name: 'echo_args',
          description: 'Answers its arguments.',
          parameters: { type: 'object', properties: { id: { type: 'integer' } }, additionalProperties: true },
          handler: (params) => {
            echoes += 1;
            return ok({ params, keys: Object.keys(params), protoIsObject: Object.getPrototypeOf(params) === Object.prototype }, 'echo');
          },
        });
        registry.registerTool({
          name: 'huge',
          description: 'Answers a very large value.',
          parameters: { type: 'object', properties: {} },
          handler: () => ok({ text: 'x'.repeat(20 * 1024 * 1024) }, 'huge'),
        });
      },
    });
  });
  afterAll(async () => {
    await app?.close();
  });

  const run = (code: string) => post(app, { name: 'code_run', arguments: { code } });
  const valueOf = async (code: string) => {
    const answer = await run(code);
    expect(answer.body.success, JSON.stringify(answer.body)).toBe(true);
    return answer.body.value.value as unknown;
  };

  it('has no require, process, fetch or timers of the host, and import() fails', async () => {
    expect(await valueOf(`return [typeof require, typeof process, typeof fetch, typeof module, typeof Buffer, typeof WebAssembly]`)).toEqual([
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
      'undefined',
    ]);
    expect(await valueOf(`try { await import('fs'); return 'imported' } catch (e) { return e.name }`)).toBe('ReferenceError');
    expect(await valueOf(`try { await import('node:child_process'); return 'imported' } catch (e) { return e.name }`)).toBe('ReferenceError');
  });

  it('reaches only the sandbox’s own global through constructors and Function', async () => {
    expect(
      await valueOf(`
        const viaFunction = Function('return this')();
        const viaConstructor = globalThis.constructor.constructor('return this')();
        const viaTool = tools.echo_args.constructor('return typeof process')();
        return [viaFunction === globalThis, viaConstructor === globalThis, viaTool, typeof viaFunction.process, globalThis.constructor.name];`),
    ).toEqual([true, true, 'undefined', 'undefined', 'Object']);
  });

  it('gives tools no prototype or host object: tools.constructor and __proto__ are tool names the pipeline refuses', async () => {
    expect(
      await valueOf(`
        const codes = [];
        for (const name of ['constructor', '__proto__', 'prototype']) {
          try { await tools[name]({}) } catch (e) { codes.push(e.code) }
        }
        return [Object.getPrototypeOf(tools), typeof tools.then, codes, Object.isFrozen(tools.echo_args)];`),
    ).toEqual([null, 'undefined', ['unknown_tool', 'unknown_tool', 'unknown_tool'], true]);
  });

  it('keeps prototype pollution through arguments inside: prototype keys are refused as in any call, the host untouched', async () => {
    const before = echoes;
    const value = (await valueOf(`
      Object.prototype.polluted = 'yes';
      const plain = await tools.echo_args({ id: 1 });
      let refused;
      try { await tools.echo_args(JSON.parse('{"id": 1, "__proto__": {"polluted": "yes"}}')) } catch (e) { refused = [e.code, e.message] }
      try { await tools.echo_args({ id: 2, constructor: { prototype: { polluted: 'yes' } } }) } catch (e) { refused.push(e.code) }
      return { plain, refused };`)) as Record<string, any>;
    expect(value.plain).toMatchObject({ keys: ['id'], protoIsObject: true });
    expect(value.refused).toEqual(['invalid_arguments', expect.stringMatching(/__proto__|prototype/), 'invalid_arguments']);
    expect(echoes - before).toBe(1);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('ends an endless loop at the deadline while /healthz keeps answering', async () => {
    const started = Date.now();
    const running = run('while (true) {}');
    for (let i = 0; i < 5; i++) {
      const health = await app.inject({ method: 'GET', url: '/healthz' });
      expect(health.statusCode).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const answer = await running;
    expect(answer.body).toMatchObject({ success: false, error: { code: 'tool_failed' }, value: { error: { name: 'LimitExceeded' } } });
    expect(answer.body.message).toMatch(/ran out of time/);
    expect(Date.now() - started).toBeLessThan(TIME_MS + 5000);
  });

  it('is cancellable: cancelling its task stops the program and its worker', async () => {
    const accepted = await post(app, { name: 'code_run', arguments: { code: 'while (true) {}' } }, { prefer: 'respond-async', 'x-timeout-ms': '60000' });
    expect(accepted.status).toBe(202);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancelled = Date.now();
    await app.inject({ method: 'DELETE', url: `/tasks/${accepted.body.task_id}` });
    const ended = await app.inject({ method: 'GET', url: `/tasks/${accepted.body.task_id}?wait_ms=10000` });
    expect(ended.json()).toMatchObject({ status: 'cancelled' });
    expect(Date.now() - cancelled).toBeLessThan(TIME_MS);
    expect(await valueOf('return 3')).toBe(3);
  });

  it('ends a loop of slow built-ins, which the engine’s interrupt misses, by ending its worker', async () => {
    const answer = await run(`for (;;) 'x'.repeat(1e6);`);
    expect(answer.body).toMatchObject({ success: false, value: { error: { name: 'LimitExceeded' } } });
    expect(answer.body.message).toMatch(/ran out of time/);
    expect(await valueOf('return 1 + 1')).toBe(2); // the next run gets a working worker
  });

  it('stops deep recursion, a string growing to 1 GB and an array filling the memory with errors the program could catch', async () => {
    const recursion = await run('const f = (n) => f(n + 1) + 1; return f(0);');
    expect(recursion.body.message).toMatch(/stack overflow|call stack/i);
    const string = await run(`let s = 'x'; while (s.length < 2 ** 30) s += s; return s.length;`);
    expect(string.body.success).toBe(false);
    expect(string.body.message).toMatch(/string too long|out of memory|invalid string length/);
    const array = await run('const a = []; for (;;) a.push({ n: a.length, s: String(a.length) });');
    expect(array.body.success).toBe(false);
    expect(array.body.message).toMatch(/out of memory|ran out of time/);
  });

  it('ends the run at the call limit: 10,000 calls run 100', async () => {
    const before = echoes;
    const answer = await run('for (let i = 0; i < 10000; i++) await tools.echo_args({ id: i }); return "done";');
    expect(answer.body).toMatchObject({ success: false, value: { error: { name: 'LimitExceeded' } } });
    expect(answer.body.message).toMatch(/more than 100 tool calls/);
    expect(echoes - before).toBe(100);
    expect(answer.body.value.calls).toHaveLength(100);
  });

  it('ends a program that fires calls or logs in a loop without awaiting, without flooding the service', async () => {
    const before = echoes;
    const calls = await run(
      'const all = []; for (let i = 0; i < 100000; i++) all.push(tools.echo_args({ id: i }).catch(() => null)); await Promise.all(all); return 1;',
    );
    expect(calls.body.message).toMatch(/more than 100 tool calls/);
    expect(echoes - before).toBeLessThanOrEqual(100);
    const logs = await run('for (;;) console.log("a line of the console, again and again");');
    expect(logs.body.message).toMatch(/ran out of time/);
    expect(JSON.stringify(logs.body.value.logs).length).toBeLessThan(25_000);
    expect(logs.body.value.logs.at(-1)).toBe('… (more console output was left out)');
  });

  it('refuses a call’s value too large for the program, and a returned value over the output limit', async () => {
    expect(await valueOf(`try { await tools.huge({}) } catch (e) { return e.code }`)).toBe('result_too_large');
    const big = await run(`return 'y'.repeat(200000);`);
    expect(big.body).toMatchObject({ success: false, value: { error: { name: 'LimitExceeded' } } });
    expect(big.body.message).toMatch(/more than 100000/);
  });

  it('runs a fake setTimeout without waiting, and reports a program that waits for nothing', async () => {
    expect(await valueOf(`await new Promise((resolve) => setTimeout(resolve, 60000)); return 'later';`)).toBe('later');
    const stuck = await run('await new Promise(() => {}); return 1;');
    expect(stuck.body.message).toMatch(/nothing will settle/);
  });
});
