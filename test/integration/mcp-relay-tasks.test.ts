/**
 * A 2026-07-28 server that answers calls with tasks (the tasks extension `io.modelcontextprotocol/tasks`):
 * toolport follows the task inside the forwarded call (docs/mcp-sources.md, "Tools that run as
 * tasks on the server"), relays its questions to the caller, and cancels it when toolport's call
 * ends first.
 */
import { fileURLToPath } from 'node:url';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { makeMcpApp, startMcpHttp } from '../helpers/mcp-upstreams.ts';
import { startTask, until } from '../helpers/tasks.ts';
import { ANSWER, answeringClient, INFO, textOf, type Asked } from '../helpers/mcp-callers.ts';

describe('a 2026-07-28 server that answers calls with tasks (the tasks extension)', () => {
  const TASKS = fileURLToPath(new URL('../fixtures/mcp/stateless-tasks-server.mjs', import.meta.url));
  let app: FastifyInstance;
  let base: string;
  let url: URL;
  beforeAll(async () => {
    const { url: upstream } = await startMcpHttp('stateless-tasks-server', TASKS);
    app = await makeMcpApp('redis', [{ source: 'later', url: upstream }]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL('/mcp', base);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  async function statuses(): Promise<Record<string, string>> {
    const response = await fetch(new URL('/tools/invoke', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'later_task_statuses', arguments: {} }),
    });
    return JSON.parse(((await response.json()) as { message: string }).message) as Record<string, string>;
  }

  it("follows the server's task to its result, its question asked of the MCP client; the task id stays in toolport", async () => {
    const asked: Asked[] = [];
    const client = await answeringClient(url, asked);
    try {
      const result = await client.callTool({ name: 'later_book_later', arguments: { day: 'Monday' } });
      expect(asked).toEqual([
        expect.objectContaining({ method: 'elicitation/create', params: expect.objectContaining({ message: 'Whose name is the table under?' }) }),
      ]);
      expect(textOf(result)).toBe('Booked Monday for Ada Lovelace, as a task.');
      expect(JSON.stringify(result)).not.toContain('task-');
    } finally {
      await client.close();
    }
  });

  it("asks a 2026-07-28 client by toolport's own input_required, and books once it answers", async () => {
    const client = new ClientV2(INFO, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    client.setRequestHandler('elicitation/create', () => ANSWER);
    await client.connect(new TransportV2(url));
    try {
      const result = await client.callTool({ name: 'later_book_later', arguments: { day: 'Tuesday' } });
      expect(textOf(result)).toBe('Booked Tuesday for Ada Lovelace, as a task.');
    } finally {
      await client.close();
    }
    // The first run's task was given up when toolport's caller had to answer; the second completed.
    const seen = Object.values(await statuses());
    expect(seen).toContain('completed');
    expect(seen).toContain('cancelled');
  });

  it("cancels the server's task when toolport's task that follows it is cancelled", async () => {
    const id = await startTask(base, 'later_hold', { tag: 'held' });
    await until("the server's task runs", async () => (await statuses()).held === 'working');
    expect((await fetch(new URL(`/tasks/${id}`, base), { method: 'DELETE' })).status).toBe(200);
    await until("the server's task is cancelled", async () => (await statuses()).held === 'cancelled');
  });
});
