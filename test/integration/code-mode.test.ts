/** Code mode (docs/code-mode.md): programs that call tools, every inner call through the pipeline; the sandbox's limits and escapes. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { codeRunDescription } from '../../src/builtin/code/tools.ts';
import { loadConfig } from '../../src/config.ts';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';

/** Tools a program combines: a lookup of users, and an order store whose handler counts its runs. */
function registerShop(registry: SourceRegistry, runs: Map<string, number>): void {
  const count = (name: string) => runs.set(name, (runs.get(name) ?? 0) + 1);
  registry.registerTool({
    name: 'users_get',
    description: 'A user by id.',
    parameters: { type: 'object', properties: { id: { type: 'integer', description: 'the user id' } }, required: ['id'] },
    handler: (params) => {
      count('users_get');
      const id = params.id as number;
      return ok({ id, name: `user ${id}`, active: id % 2 === 1 }, `user ${id}`);
    },
  });
  registry.registerTool({
    name: 'orders_list',
    description: 'The orders of a user.',
    parameters: { type: 'object', properties: { user: { type: 'integer' } }, required: ['user'] },
    handler: (params) => {
      count('orders_list');
      const user = params.user as number;
      return ok(
        Array.from({ length: 4 }, (_, i) => ({ id: `${user}-${i}`, total: (user * 10 + i) * 3 })),
        'orders',
      );
    },
  });
  registry.registerTool({
    name: 'huge',
    description: 'Answers a very large value.',
    parameters: { type: 'object', properties: {} },
    handler: () => ok({ text: 'x'.repeat(20 * 1024 * 1024) }, 'huge'),
  });
}

/** 3 sequential calls, a Promise.all of 5 and a loop with a filter. */
export const PROGRAM = `
const a = await tools.users_get({ id: 1 });
const b = await tools.users_get({ id: 2 });
const c = await tools.users_get({ id: 3 });
const users = await Promise.all([4, 5, 6, 7, 8].map((id) => tools.users_get({ id })));
const big = [];
for (const user of [a, b, c, ...users].filter((u) => u.active)) {
  const orders = await tools.orders_list({ user: user.id });
  big.push(...orders.filter((o) => o.total > 100).map((o) => o.id));
}
console.log('checked', 8, 'users');
return { names: [a.name, b.name, c.name], big };`;

export const EXPECTED = { names: ['user 1', 'user 2', 'user 3'], big: ['5-0', '5-1', '5-2', '5-3', '7-0', '7-1', '7-2', '7-3'] };

describe.each(STORES)('code mode (%s store)', (kind) => {
  let app: FastifyInstance;
  const runs = new Map<string, number>();
  beforeAll(async () => {
    app = await makeApp(kind, { env: { CODE_MODE: 'true', CODE_TIME_MS: '5000' }, register: (registry) => registerShop(registry, runs) });
  });
  afterAll(async () => {
    await app?.close();
  });

  const run = (code: string, headers: Record<string, string> = {}) => post(app, { name: 'code_run', arguments: { code } }, headers);

  it('runs a program of sequential, parallel and looped calls and lists every call', async () => {
    const answer = await run(PROGRAM);
    expect(answer.status).toBe(200);
    expect(answer.body.success).toBe(true);
    expect(answer.body.value.value).toEqual(EXPECTED);
    expect(answer.body.value.logs).toEqual(['checked 8 users']);
    const calls = answer.body.value.calls as { name: string; success: boolean; duration_ms: number }[];
    expect(calls.map((c) => c.name)).toEqual([...Array(8).fill('users_get'), 'orders_list', 'orders_list', 'orders_list', 'orders_list']);
    expect(calls.every((c) => c.success && c.duration_ms >= 0)).toBe(true);
  });

  it('lists code_api and code_run, and code_api answers declarations ranked by the query', async () => {
    const listed = await get(app, '/tools');
    const names = (listed.body.tools as { name: string }[]).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['code_api', 'code_run']));
    const api = await post(app, { name: 'code_api', arguments: { query: 'orders of a user', limit: 2 } });
    expect(api.body.success).toBe(true);
    expect(api.body.value.tools[0]).toBe('orders_list');
    expect(api.body.message).toContain('orders_list(args: {\n    user: number;\n  }): Promise<unknown>;');
    expect(api.body.message).toContain('declare class ToolError');
  });

  it('throws an inner failure as a ToolError with code and message, and an unknown tool as unknown_tool', async () => {
    const answer = await run(`
      const caught = [];
      for (const call of [() => tools.users_get({ id: 'x' }), () => tools.no_such_tool({}), () => tools.constructor({})]) {
        try { await call() } catch (e) { caught.push([e.name, e.code, e instanceof Error, typeof e.message]) }
      }
      return caught;`);
    expect(answer.body.value.value).toEqual([
      ['ToolError', 'invalid_arguments', true, 'string'],
      ['ToolError', 'unknown_tool', true, 'string'],
      ['ToolError', 'unknown_tool', true, 'string'],
    ]);
  });

  it('replays the inner calls that succeeded when the same program runs again in the same session, and only there', async () => {
    const program = `await tools.orders_list({ user: 41 }); const u = await tools.users_get({ id: 42 }); if (!u.active) throw new Error('user 42 is not active');`;
    const session = { 'x-session-id': `replay-${kind}-${Date.now()}` };
    const before = runs.get('orders_list') ?? 0;
    const first = await run(program, session);
    expect(first.body.message).toMatch(/user 42 is not active/);
    const again = await run(program, session);
    expect(again.body.value.calls).toMatchObject([
      { name: 'orders_list', success: true, replayed: true },
      { name: 'users_get', success: true, replayed: true },
    ]);
    expect(runs.get('orders_list')).toBe(before + 1);
    const elsewhere = await run(program, { 'x-session-id': `${session['x-session-id']}-other` });
    expect(elsewhere.body.value.calls[0].replayed).toBeUndefined();
    expect(runs.get('orders_list')).toBe(before + 2);
    const changed = await run(`${program}\n// another program`, session);
    expect(changed.body.value.calls[0].replayed).toBeUndefined();
    expect(runs.get('orders_list')).toBe(before + 3);
  });

  it('shows each inner call in the call feed, marked with its run (the code_run call)', async () => {
    const answer = await post(app, {
      id: `run_${kind}_feed`,
      name: 'code_run',
      arguments: { code: 'await tools.users_get({ id: 9 }); return await tools.orders_list({ user: 9 });' },
    });
    expect(answer.body.success).toBe(true);
    const entries = await until('the inner calls reach the feed', async () => {
      const calls = (await get(app, '/calls?limit=20')).body.calls as { tool: string; parent_call_id: string | null; call_id: string }[];
      const inner = calls.filter((c) => c.parent_call_id === `run_${kind}_feed`);
      return inner.length === 2 && calls.some((c) => c.call_id === `run_${kind}_feed`) ? inner : null;
    });
    expect(entries.map((c) => c.tool).sort()).toEqual(['orders_list', 'users_get']);
  });

  it('answers an uncaught error as the tool-level failure, with the logs and calls so far', async () => {
    const answer = await run(`console.log('before'); await tools.users_get({ id: 1 }); throw new TypeError('no such order');`);
    expect(answer.body).toMatchObject({ success: false, error: { code: 'tool_failed' } });
    expect(answer.body.message).toMatch(/TypeError: no such order/);
    expect(answer.body.value).toMatchObject({ error: { name: 'TypeError' }, logs: ['before'], calls: [{ name: 'users_get', success: true }] });
  });
});

describe('what the model is told', () => {
  it('is quoted whole in docs/code-mode.md, with the default limits', () => {
    const page = readFileSync(new URL('../../docs/code-mode.md', import.meta.url), 'utf8');
    const quoted = page
      .split('\n')
      .filter((line) => line.startsWith('>'))
      .map((line) => line.replace(/^> ?/, ''))
      .join(' ');
    expect(quoted).toBe(codeRunDescription(loadConfig({}).code));
  });
});
