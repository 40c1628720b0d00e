/**
 * Approvals in MCP tasks: a 2026-07-28 client that declared the tasks extension sees a held call as a
 * task in `input_required` whose `inputRequests` hold the approval form, and answers it with
 * tasks/update; a 2025-11-25 task-augmented call waits in `input_required` until a person decides
 * through /approvals. Either way the approved call runs once.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { bearer } from '../helpers/keys.ts';
import { until } from '../helpers/tasks.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} }, elicitation: {} },
};

describe.each(STORES)('approvals in MCP tasks (%s store)', (kind) => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  beforeAll(async () => {
    fx = await policyFixture();
    app = await makeApp(kind, { env: { ...fx.env, MCP_TASK_INLINE_MS: '200' }, register: fx.register });
  });
  afterAll(async () => {
    await app?.close();
  });

  let nextId = 1;
  async function rpc(method: string, params: Record<string, unknown>, stateless = true, session?: string): Promise<Record<string, any>> {
    const name = method === 'tools/call' ? params.name : params.taskId;
    const response = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...bearer(fx.keys.agent),
        ...(stateless && { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method }),
        ...(stateless && typeof name === 'string' && { 'mcp-name': name }),
        ...(!stateless && { 'mcp-protocol-version': '2025-11-25' }),
        ...(session !== undefined && { 'mcp-session-id': session }),
      },
      payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: stateless ? { ...params, _meta: META } : params }),
    });
    return response.json() as Record<string, any>;
  }

  it('2026-07-28: the task waits with the approval form in inputRequests, and tasks/update with the answer runs the call once', async () => {
    const before = fx.runs.get('payments_refund') ?? 0;
    const started = (await rpc('tools/call', { name: 'payments_refund', arguments: { order: 'mt-1', amount: 2500 } })).result;
    expect(started).toMatchObject({ resultType: 'task' });
    const taskId = started.taskId as string;
    const waiting = await until('the task waits for input', async () => {
      const task = (await rpc('tasks/get', { taskId })).result;
      return task.status === 'input_required' ? task : null;
    });
    expect(waiting.inputRequests.approval).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', requestedSchema: { properties: { approve: { type: 'boolean' } } } },
    });
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);

    await rpc('tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { approve: true, note: 'ok' } } } });
    const done = await until('the task completes', async () => {
      const task = (await rpc('tasks/get', { taskId })).result;
      return task.status === 'completed' ? task : null;
    });
    expect(done.result).toMatchObject({ isError: false });
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
    const approvals = (await get(app, '/approvals?limit=200', bearer(fx.keys.ops))).body.approvals as Record<string, any>[];
    expect(approvals.find((a) => a.arguments.order === 'mt-1')).toMatchObject({ status: 'executed', decision: { by: 'client:agent', note: 'ok' } });
  });

  it('2026-07-28: a declined form ends the task with approval_denied and runs nothing', async () => {
    const before = fx.runs.get('payments_refund') ?? 0;
    const taskId = (await rpc('tools/call', { name: 'payments_refund', arguments: { order: 'mt-2', amount: 2500 } })).result.taskId as string;
    await until('the task waits for input', async () => ((await rpc('tasks/get', { taskId })).result.status === 'input_required' ? true : null));
    await rpc('tasks/update', { taskId, inputResponses: { approval: { action: 'decline' } } });
    const done = await until('the task completes', async () => {
      const task = (await rpc('tasks/get', { taskId })).result;
      return task.status === 'completed' ? task : null;
    });
    expect(done.result.isError).toBe(true);
    expect(JSON.stringify(done.result.content)).toMatch(/declined/);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(before);
  });

  it('2025-11-25: a task-augmented call waits in input_required until a person decides through /approvals, then runs once', async () => {
    const session = (
      await app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer(fx.keys.agent) },
        payload: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        }),
      })
    ).headers['mcp-session-id'] as string;
    const before = fx.runs.get('send_letter') ?? 0;
    const created = (await rpc('tools/call', { name: 'send_letter', arguments: { order: 'mt-3', amount: 1 }, task: { ttl: 60_000 } }, false, session)).result;
    const taskId = created.task.taskId as string;
    const waiting = await until('the task waits for input', async () => {
      const task = (await rpc('tasks/get', { taskId }, false, session)).result;
      return task.status === 'input_required' ? task : null;
    });
    expect(waiting.status).toBe('input_required');
    const approval = (await get(app, `/tasks/${taskId}`, bearer(fx.keys.agent))).body.approval.id as string;
    expect((await post(app, { decision: 'approve' }, bearer(fx.keys.finance), `/approvals/${approval}/decision`)).status).toBe(200);
    const result = (await rpc('tasks/result', { taskId }, false, session)).result;
    expect(result.isError).toBe(false);
    expect(fx.runs.get('send_letter')).toBe(before + 1);
  });
});
