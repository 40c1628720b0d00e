/**
 * The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks) over raw JSON-RPC, on each store:
 * server-directed tasks for clients that declare it, tasks/get with the result inline, tasks/update,
 * tasks/cancel, input_required with inputRequests — on the same tasks as /tasks.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, STORES } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';
import { aborted, started } from '../helpers/tools.ts';

const VERSION = '2026-07-28';
const TASKS = 'io.modelcontextprotocol/tasks';
const declaring = { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } } };
const plain = { 'io.modelcontextprotocol/protocolVersion': VERSION, 'io.modelcontextprotocol/clientCapabilities': {} };

/** Runs of `needs_answer` by tag: the first run waits (until aborted), later ones answer. */
const answerRuns = new Map<string, number>();

function register(registry: SourceRegistry): void {
  registry.registerTool({
    name: 'needs_answer',
    description: 'Waits on its first run; answers on the next.',
    parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
    handler: async (params, context) => {
      const tag = params.tag as string;
      const run = (answerRuns.get(tag) ?? 0) + 1;
      answerRuns.set(tag, run);
      if (run === 1) await sleep(60_000, undefined, { signal: context.signal });
      return ok({ tag, run }, `answered on run ${run}`);
    },
  });
}

describe.each(STORES)('MCP tasks extension, 2026-07-28 (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { env: { MCP_TASK_INLINE_MS: '300' }, register });
  });
  afterAll(() => app.close());

  let nextId = 1;
  async function rpc(method: string, params: Record<string, unknown>, meta: Record<string, unknown> = declaring, name?: string) {
    const mcpName = name ?? (method === 'tools/call' ? (params.name as string) : (params.taskId as string | undefined));
    const response = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': VERSION,
        'mcp-method': method,
        ...(mcpName !== undefined && { 'mcp-name': mcpName }),
      },
      payload: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params: { ...params, _meta: meta } }),
    });
    return { status: response.statusCode, body: response.json() as Record<string, any> };
  }

  const getTask = async (taskId: string) => (await rpc('tasks/get', { taskId })).body.result;
  const settled = (taskId: string, status: string) =>
    until(`task ${taskId} is ${status}`, async () => ((await getTask(taskId)).status === status ? getTask(taskId) : null));

  it('declares the extension in server/discover', async () => {
    const { body } = await rpc('server/discover', {}, plain);
    expect(body.result.capabilities.extensions).toEqual({ [TASKS]: {} });
  });

  it('answers a quick call inline, and a slow one with a task whose result tasks/get carries, readable over HTTP too', async () => {
    const quick = await rpc('tools/call', { name: 'echo', arguments: { text: 'now' } });
    expect(quick.body.result).toMatchObject({ resultType: 'complete', isError: false, structuredContent: { text: 'now' } });

    const slow = await rpc('tools/call', { name: 'slow', arguments: { ms: 1500, tag: 'later' } });
    const handle = slow.body.result;
    expect(handle).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 86_400_000, pollIntervalMs: 1000 });
    expect(Object.keys(handle).sort()).toEqual(['createdAt', 'lastUpdatedAt', 'pollIntervalMs', 'resultType', 'status', 'taskId', 'ttlMs']);
    const done = await settled(handle.taskId, 'completed');
    expect(done).toMatchObject({
      resultType: 'complete',
      taskId: handle.taskId,
      result: { isError: false, structuredContent: { tag: 'later', waited: 1500 } },
    });
    const overHttp = await get(app, `/tasks/${handle.taskId}`);
    expect(overHttp.body).toMatchObject({ status: 'completed', tool: 'slow', result: { success: true, value: { tag: 'later' } } });
  });

  it('never gives a task to a client that did not declare the extension, and refuses it the task methods', async () => {
    const call = await rpc('tools/call', { name: 'slow', arguments: { ms: 400 } }, plain);
    expect(call.body.result).toMatchObject({ resultType: 'complete', isError: false });
    const accepted = await app.inject({
      method: 'POST',
      url: '/tools/invoke',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      payload: { name: 'echo', arguments: { text: 'x' } },
    });
    const taskId = accepted.json().task_id as string;
    const refused = await rpc('tasks/get', { taskId }, plain);
    expect(refused.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { [TASKS]: {} } } } });
    // A task made over HTTP is readable with the extension.
    expect((await settled(taskId, 'completed')).result).toMatchObject({ structuredContent: { text: 'x' } });
  });

  it('answers an unknown task with -32602 and a Mcp-Name that is not the task id with -32020', async () => {
    expect((await rpc('tasks/get', { taskId: '0190a4b8-0000-7000-8000-000000000000' })).body.error.code).toBe(-32602);
    const wrongName = await rpc('tasks/get', { taskId: '0190a4b8-0000-7000-8000-000000000000' }, declaring, 'another');
    expect(wrongName).toMatchObject({ status: 400, body: { error: { code: -32020 } } });
  });

  it('acknowledges tasks/cancel and aborts the handler', async () => {
    const before = started.size;
    const handle = (await rpc('tools/call', { name: 'watch_abort', arguments: {} })).body.result;
    expect(handle.resultType).toBe('task');
    await until('the handler starts', () => started.size > before);
    const abortsBefore = aborted.size;
    expect((await rpc('tasks/cancel', { taskId: handle.taskId })).body.result).toEqual({ resultType: 'complete' });
    await until('the handler is aborted', () => aborted.size > abortsBefore);
    expect(await settled(handle.taskId, 'cancelled')).toMatchObject({ statusMessage: expect.stringContaining('cancelled') });
  });

  it('shows a task held for input as input_required with its inputRequests, and resumes it on tasks/update', async () => {
    const tag = `answer-${store}-${randomUUID()}`;
    const handle = (await rpc('tools/call', { name: 'needs_answer', arguments: { tag } })).body.result;
    expect(handle).toMatchObject({ resultType: 'task', status: 'working' });
    await until('the first run starts', () => answerRuns.get(tag) === 1);
    const inputRequests = {
      confirm: {
        method: 'elicitation/create',
        params: { mode: 'form', message: 'Go on?', requestedSchema: { type: 'object', properties: { go: { type: 'boolean' } } } },
      },
    };
    expect(await app.toolport.tasks.hold(handle.taskId, { inputRequests })).toBe(true);

    expect(await getTask(handle.taskId)).toMatchObject({ resultType: 'complete', status: 'input_required', inputRequests });
    expect((await get(app, `/tasks/${handle.taskId}`)).body).toMatchObject({ status: 'input_required', input_requests: inputRequests });
    // An answer to a key that is not outstanding is ignored.
    expect((await rpc('tasks/update', { taskId: handle.taskId, inputResponses: { other: { action: 'accept' } } })).body.result).toEqual({
      resultType: 'complete',
    });
    expect((await getTask(handle.taskId)).status).toBe('input_required');
    expect((await rpc('tasks/update', { taskId: handle.taskId, inputResponses: 'yes' })).body.error.code).toBe(-32602);

    expect(
      (await rpc('tasks/update', { taskId: handle.taskId, inputResponses: { confirm: { action: 'accept', content: { go: true } } } })).body.result,
    ).toEqual({ resultType: 'complete' });
    const done = await settled(handle.taskId, 'completed');
    expect(done.result).toMatchObject({ isError: false, structuredContent: { tag, run: 2 } });
    expect(done.inputRequests).toBeUndefined();
  });
});
