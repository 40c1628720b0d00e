/**
 * Code mode's inner calls are nested calls of code_run's caller (docs/code-mode.md): policy denies
 * them, approvals stop the run and the same program completes after the decision without running
 * an effect twice, access rules and toolsets hide tools; and code_run answers over every format,
 * /mcp and as a task.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ok } from '../../src/tools/define.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { DEFAULT_RULES, policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { FLAVOURS, connectMcp } from '../helpers/mcp-client.ts';
import { until } from '../helpers/tasks.ts';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

/** Refunds one small order (no approval), then a large one (approval) and returns both. */
const REFUNDS = `
const small = await tools.payments_refund({ order: 'o-small', amount: 500 });
const large = await tools.payments_refund({ order: 'o-large', amount: 1500 });
return [small.refunded, large.refunded];`;

describe('code mode through the pipeline', () => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  let narrow: string;
  let base: string;
  beforeAll(async () => {
    fx = await policyFixture(DEFAULT_RULES, { CODE_MODE: 'true', CODE_TIME_MS: '10000' });
    // A key that may call code mode and send_letter only, and a toolset whose members are called from programs.
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-code-'));
    narrow = `sk-${randomUUID()}`;
    await writeFile(
      path.join(dir, 'keys.json'),
      JSON.stringify([
        { id: 'agent', key_sha256: sha(fx.keys.agent), tools: ['*'] },
        { id: 'finance', key_sha256: sha(fx.keys.finance), tools: [] },
        { id: 'narrow', key_sha256: sha(narrow), tools: ['code_*', 'weather_*'] },
      ]),
    );
    await writeFile(
      path.join(dir, 'tools.yaml'),
      stringify({
        policy: DEFAULT_RULES,
        toolsets: { weather: { tools: ['weather_*'], code_mode: true, description: 'Weather, from programs.' } },
        credentials: { forecast_key: { type: 'secret' } },
      }),
    );
    app = await makeApp('memory', {
      env: {
        ...fx.env,
        API_KEYS_FILE: path.join(dir, 'keys.json'),
        TOOLS_FILE: path.join(dir, 'tools.yaml'),
        PUBLIC_URL: 'http://toolport.test',
        SECRETS_KEY: randomBytes(32).toString('hex'),
      },
      register: (registry) => {
        fx.register(registry);
        registry.registerTool({
          name: 'weather_now',
          description: 'The weather in a city.',
          parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          handler: (params) => ok({ city: params.city, celsius: String(params.city).length }, `weather in ${String(params.city)}`),
        });
        registry.registerTool({
          name: 'forecast',
          description: 'Tomorrow, with the user’s own key.',
          parameters: { type: 'object', properties: {} },
          credentials: ['forecast_key'],
          handler: async (_params, context) => ok({ key: (await context.credentials.get('forecast_key')).slice(0, 3) }, 'sunny'),
        });
      },
    });
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
  });

  const run = (code: string, secret = fx.keys.agent, headers: Record<string, string> = {}) =>
    post(app, { name: 'code_run', arguments: { code } }, { ...bearer(secret), ...headers });

  it('throws policy_denied in the program for a call policy denies, and runs nothing', async () => {
    const answer = await run(`try { await tools.wipe_disk({}) } catch (e) { return { code: e.code, message: e.message } }`);
    expect(answer.body.success).toBe(true);
    expect(answer.body.value.value).toEqual({ code: 'policy_denied', message: 'Destructive tools are reserved for the ops team; ask a person.' });
    expect(answer.body.value.calls).toMatchObject([{ name: 'wipe_disk', success: false, error: 'policy_denied' }]);
    expect(fx.runs.get('wipe_disk')).toBeUndefined();
  });

  it('ends the run with approval_required, and after approval the same program completes with the earlier effect run once', async () => {
    const session = { 'x-session-id': `code-${randomUUID()}` };
    const held = await run(REFUNDS, fx.keys.agent, session);
    expect(held.body).toMatchObject({ success: false, error: { code: 'approval_required' }, approval: { status: 'pending' } });
    expect(fx.runs.get('payments_refund')).toBe(1);
    const id = held.body.approval.id as string;
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.finance))).body).toMatchObject({ tool: 'payments_refund', arguments: { amount: 1500 } });

    const waiting = await run(REFUNDS, fx.keys.agent, session);
    expect(waiting.body).toMatchObject({ error: { code: 'approval_required' }, approval: { id } });
    expect(fx.runs.get('payments_refund')).toBe(1);

    const decided = await post(app, { decision: 'approve' }, bearer(fx.keys.finance), `/approvals/${id}/decision`);
    expect(decided.body.status).toBe('approved');
    const done = await run(REFUNDS, fx.keys.agent, session);
    expect(done.body.success).toBe(true);
    expect(done.body.value.value).toEqual([500, 1500]);
    expect(done.body.value.calls).toMatchObject([
      { name: 'payments_refund', success: true, replayed: true },
      { name: 'payments_refund', success: true },
    ]);
    expect(fx.runs.get('payments_refund')).toBe(2); // the small refund once, the large one once
  });

  it('ends the run with authorization_required and its link, and completes once the credential is there', async () => {
    const program = `const w = await tools.weather_now({ city: 'Paris' }); const f = await tools.forecast({}); return [w.celsius, f.key];`;
    const missing = await run(program);
    expect(missing.body).toMatchObject({ success: false, error: { code: 'authorization_required' }, authorization: { credential: 'forecast_key' } });
    expect(missing.body.authorization.url).toMatch(/^http:\/\/toolport\.test\/connections\/forecast_key\/start\?link=/);
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/forecast_key',
      headers: { ...bearer(fx.keys.agent), 'content-type': 'application/json' },
      payload: { value: 'abc-123' },
    });
    expect(put.statusCode).toBe(204);
    const done = await run(program);
    expect(done.body.value).toMatchObject({
      value: [5, 'abc'],
      calls: [
        { name: 'weather_now', replayed: true },
        { name: 'forecast', success: true },
      ],
    });
  });

  it('answers unknown_tool for a tool outside the caller’s access, as a direct call does', async () => {
    const direct = await post(app, { name: 'payments_refund', arguments: { order: 'x', amount: 1 } }, bearer(narrow));
    expect(direct.body.error.code).toBe('unknown_tool');
    const answer = await run(`try { await tools.payments_refund({ order: 'x', amount: 1 }) } catch (e) { return e.code }`, narrow);
    expect(answer.body.value.value).toBe('unknown_tool');
    const api = await post(app, { name: 'code_api', arguments: {} }, bearer(narrow));
    expect(api.body.value.tools).toEqual(['weather_now']);
  });

  it('lists only code_api and code_run in a code_mode toolset, whose programs reach its members and nothing else', async () => {
    const listed = await get(app, '/tools?toolset=weather', bearer(fx.keys.agent));
    expect((listed.body.tools as { name: string }[]).map((t) => t.name).sort()).toEqual(['code_api', 'code_run']);
    const toolsets = (await get(app, '/toolsets', bearer(fx.keys.agent))).body.toolsets as Record<string, unknown>[];
    expect(toolsets).toEqual([expect.objectContaining({ name: 'weather', code_mode: true, tools: ['weather_now'] })]);
    const answer = await run(
      `const w = await tools.weather_now({ city: 'Oslo' }); let refund; try { await tools.payments_refund({ order: 'y', amount: 1 }) } catch (e) { refund = e.code } return [w.celsius, refund];`,
      fx.keys.agent,
      { 'x-toolset': 'weather' },
    );
    expect(answer.body.value.value).toEqual([4, 'unknown_tool']);
  });

  it('answers in every format of /tools/invoke', async () => {
    const code = `return (await tools.weather_now({ city: 'Rome' })).celsius * 10`;
    const args = JSON.stringify({ code });
    const shapes: [string, unknown][] = [
      ['native', { id: 'n1', name: 'code_run', arguments: { code } }],
      ['openai', { id: 'c1', type: 'function', function: { name: 'code_run', arguments: args } }],
      ['openai-responses', { type: 'function_call', call_id: 'c2', name: 'code_run', arguments: args }],
      ['anthropic', { type: 'tool_use', id: 'toolu_1', name: 'code_run', input: { code } }],
      ['gemini', { functionCall: { name: 'code_run', args: { code }, id: 'fc-1' } }],
    ];
    for (const [format, body] of shapes) {
      const answer = await post(app, body, bearer(fx.keys.agent));
      expect(answer.status, format).toBe(200);
      expect(answer.body).toMatchObject({ success: true, value: { value: 40 } });
      // What goes back to the model, in the format's own message: the program's value among the content.
      expect(JSON.stringify(answer.body.tool_message), format).toMatch(/\\?"value\\?":40/);
    }
  });

  it.each(FLAVOURS)('answers over /mcp with the SDK client (%s)', async (flavour) => {
    const client = await connectMcp(flavour, new URL('/mcp', base), { headers: bearer(fx.keys.agent) });
    try {
      const result = await client.callTool('code_run', { code: `return [await tools.weather_now({ city: 'Lima' }), 1 + 1]` });
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent ?? JSON.parse(result.content[0].text)).toMatchObject({ value: [{ city: 'Lima', celsius: 4 }, 2] });
    } finally {
      await client.close();
    }
  });

  it('runs as a task, the program’s answer the task’s result', async () => {
    const accepted = await post(
      app,
      { name: 'code_run', arguments: { code: `return await tools.weather_now({ city: 'Kyiv' })` } },
      {
        ...bearer(fx.keys.agent),
        prefer: 'respond-async',
      },
    );
    expect(accepted.status).toBe(202);
    const task = await until('the task ends', async () => {
      const seen = (await get(app, `/tasks/${accepted.body.task_id}`, bearer(fx.keys.agent))).body;
      return seen.status !== 'working' ? seen : null;
    });
    expect(task.status).toBe('completed');
    expect(task.result.value).toMatchObject({ value: { city: 'Kyiv', celsius: 4 }, calls: [{ name: 'weather_now', success: true }] });
  });

  it('as a task, waits in input_required for the approval, then runs the program again by itself with the earlier effect once', async () => {
    const program = `const a = await tools.payments_refund({ order: 't-small', amount: 10 }); const b = await tools.payments_refund({ order: 't-large', amount: 2000 }); return [a.refunded, b.refunded];`;
    const before = fx.runs.get('payments_refund') ?? 0;
    const accepted = await post(app, { name: 'code_run', arguments: { code: program } }, { ...bearer(fx.keys.agent), prefer: 'respond-async' });
    expect(accepted.status).toBe(202);
    const taskUrl = `/tasks/${accepted.body.task_id}`;
    const waiting = await until('the task waits for the approval', async () => {
      const task = (await get(app, taskUrl, bearer(fx.keys.agent))).body;
      return task.status === 'input_required' ? task : null;
    });
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
    const decided = await post(app, { decision: 'approve' }, bearer(fx.keys.finance), `/approvals/${waiting.approval.id}/decision`);
    expect(decided.status).toBe(200);
    const done = await until('the task completes', async () => {
      const task = (await get(app, taskUrl, bearer(fx.keys.agent))).body;
      return task.status === 'completed' || task.status === 'failed' ? task : null;
    });
    expect(done.status).toBe('completed');
    expect(done.result.value).toMatchObject({ value: [10, 2000], calls: [{ replayed: true }, { success: true }] });
    expect(fx.runs.get('payments_refund')).toBe(before + 2);
  });
});
