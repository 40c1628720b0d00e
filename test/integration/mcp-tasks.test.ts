/**
 * MCP tasks (2025-11-25) with the official SDK v1 client's task API, unchanged, on the same task
 * store as /tasks: a task started over MCP reads over HTTP, and one started over HTTP over MCP.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { comparable } from '../helpers/tasks.ts';

async function connect(url: URL): Promise<Client> {
  const client = new Client({ name: 'toolport-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

async function rpc(app: FastifyInstance, method: string, params: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await post(
    app,
    { jsonrpc: '2.0', id: 1, method, params },
    { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    '/mcp',
  );
  return response.body;
}

describe.each(STORES)('MCP tasks (%s store)', (store) => {
  let app: FastifyInstance;
  let url: URL;
  beforeAll(async () => {
    app = await makeApp(store);
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  });
  afterAll(() => app.close());

  it('declares the tasks capability and marks every tool taskSupport optional', async () => {
    const client = await connect(url);
    try {
      expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const { tools } = await client.listTools();
      expect(tools.every((tool) => tool.execution?.taskSupport === 'optional')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('runs a task-augmented call with client.experimental.tasks.callToolStream and gets its result', async () => {
    const client = await connect(url);
    try {
      await client.listTools();
      const kinds: string[] = [];
      let taskId = '';
      let result: Record<string, any> | undefined;
      for await (const message of client.experimental.tasks.callToolStream({ name: 'steps', arguments: { n: 3, ms: 100 } }, CallToolResultSchema, {
        task: { ttl: 60_000 },
      })) {
        kinds.push(message.type);
        if (message.type === 'taskCreated') taskId = message.task.taskId;
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      expect(kinds[0]).toBe('taskCreated');
      expect(kinds.at(-1)).toBe('result');
      expect(result).toMatchObject({ isError: false, structuredContent: { steps: 3 } });
      expect(result!._meta).toEqual({ 'io.modelcontextprotocol/related-task': { taskId } });
      const sync = await client.callTool({ name: 'steps', arguments: { n: 3, ms: 100 } });
      expect(result!.content).toEqual(sync.content);

      const task = await client.experimental.tasks.getTask(taskId);
      expect(task).toMatchObject({ taskId, status: 'completed', ttl: 86_400_000, pollInterval: 1000 });
      expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(taskId);
      const again = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(again.structuredContent).toEqual({ steps: 3 });
    } finally {
      await client.close();
    }
  });

  it('cancels with tasks/cancel, and tasks/result waits for the end', async () => {
    const client = await connect(url);
    try {
      const created = await rpc(app, 'tools/call', { name: 'watch_abort', arguments: {}, task: {} });
      const taskId = created.result.task.taskId as string;
      expect(created.result.task).toMatchObject({ status: 'working' });
      const waiting = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).then(
        () => 'answered',
        (err: Error) => err.message,
      );
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(['working', 'cancelled']).toContain(cancelled.status);
      expect(await waiting).toMatch(/cancelled/);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/already ended/);
    } finally {
      await client.close();
    }
  });

  it('reads a task started over MCP over HTTP, and a task started over HTTP over MCP', async () => {
    const created = await rpc(app, 'tools/call', { name: 'echo', arguments: { text: 'from mcp' }, task: { ttl: 1000 } });
    const overHttp = await get(app, `/tasks/${created.result.task.taskId}?wait_ms=30000`);
    expect(overHttp.body).toMatchObject({ status: 'completed', tool: 'echo', result: { success: true, value: { text: 'from mcp' } } });
    expect(overHttp.body.result.tool_message).toEqual({
      content: [{ type: 'text', text: overHttp.body.result.content }],
      structuredContent: { text: 'from mcp' },
      isError: false,
    });
    const sync = await post(app, { name: 'echo', arguments: { text: 'from mcp' } }, {}, '/tools/invoke?format=mcp');
    expect(comparable({ ...overHttp.body.result, id: null })).toEqual(comparable({ ...sync.body, id: null }));

    const accepted = await post(app, { name: 'echo', arguments: { text: 'from http' } }, { prefer: 'respond-async' });
    const result = await rpc(app, 'tasks/result', { taskId: accepted.body.task_id });
    expect(result.result).toMatchObject({ isError: false, structuredContent: { text: 'from http' } });
    expect((await rpc(app, 'tasks/get', { taskId: accepted.body.task_id })).result.status).toBe('completed');
    expect((await rpc(app, 'tasks/get', { taskId: 'nope' })).error.code).toBe(-32602);
  });
});
