/**
 * What an upstream MCP server of the handshake era asks and tells during a forwarded call reaches
 * the caller of that call (docs/mcp-sources.md, "Questions and log messages of the server"): server-everything
 * over stdio and over Streamable HTTP asks for sampling and elicitation and reports progress; a
 * small server of our own logs inside its call and asks while another call is in flight. Callers:
 * the official SDK clients on /mcp (v1 in the handshake era, v2 in 2026-07-28) and HTTP /invoke
 * (plain and as a task). A 2026-07-28 server's tasks: mcp-relay-tasks.test.ts.
 */
import { fileURLToPath } from 'node:url';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { EVERYTHING, makeMcpApp, startEverythingHttp, startMcpHttp, stdioServer } from '../helpers/mcp-upstreams.ts';
import { startTask, until } from '../helpers/tasks.ts';
import { ANSWER, answeringClient, COMPLETION, INFO, textOf, type Asked } from '../helpers/mcp-callers.ts';

const RELAYING = fileURLToPath(new URL('../fixtures/mcp/relaying-server.mjs', import.meta.url));
describe.each(['stdio', 'Streamable HTTP'] as const)('server-everything over %s: its questions reach the caller', (transport) => {
  let app: FastifyInstance;
  let url: URL;
  let base: string;
  beforeAll(async () => {
    const entry = transport === 'stdio' ? stdioServer('everything', EVERYTHING) : { source: 'everything', url: (await startEverythingHttp()).url };
    app = await makeMcpApp('redis', [entry]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL('/mcp', base);
    // The tools that ask are offered only to a client that declared sampling and elicitation: toolport does.
    await until('the asking tools are listed', async () => {
      const response = await fetch(new URL('/tools', base));
      const names = ((await response.json()) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      return names.includes('everything_trigger-sampling-request') && names.includes('everything_trigger-elicitation-request');
    });
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it("relays sampling/createMessage to the MCP client and the server's answer back", async () => {
    const asked: Asked[] = [];
    const client = await answeringClient(url, asked);
    try {
      const result = await client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'the meaning of life', maxTokens: 20 } });
      expect(asked).toEqual([
        expect.objectContaining({
          method: 'sampling/createMessage',
          params: expect.objectContaining({ maxTokens: 20, systemPrompt: 'You are a helpful test server.' }),
        }),
      ]);
      expect(JSON.stringify(asked[0]!.params.messages)).toContain('the meaning of life');
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('forty-two');
    } finally {
      await client.close();
    }
  });

  it('relays elicitation/create to the MCP client and its answer back', async () => {
    const asked: Asked[] = [];
    const client = await answeringClient(url, asked);
    try {
      const result = await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} });
      expect(asked).toEqual([
        expect.objectContaining({ method: 'elicitation/create', params: expect.objectContaining({ requestedSchema: expect.any(Object) }) }),
      ]);
      expect(textOf(result)).toContain('Ada Lovelace');
    } finally {
      await client.close();
    }
  });

  it('follows a tool that requires tasks to its end, relaying the question the server queued for its task', async () => {
    const asked: Asked[] = [];
    const client = await answeringClient(url, asked);
    try {
      const result = await client.callTool({ name: 'everything_simulate-research-query', arguments: { topic: 'python', ambiguous: true } });
      expect(asked).toEqual([
        expect.objectContaining({ method: 'elicitation/create', params: expect.objectContaining({ message: expect.stringContaining('python') }) }),
      ]);
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain('Research Report: python (programming)');
    } finally {
      await client.close();
    }
  }, 30_000);

  it("relays the server's progress to the MCP client", async () => {
    const client = await answeringClient(url, []);
    const reported: number[] = [];
    try {
      await client.callTool({ name: 'everything_trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
        onprogress: (progress) => void reported.push(progress.progress),
      });
      expect(reported).toEqual([1, 2, 3]);
    } finally {
      await client.close();
    }
  });

  it('answers a caller that cannot sample with input_unavailable, and the server with an error', async () => {
    const client = new ClientV1(INFO);
    await client.connect(new TransportV1(url));
    try {
      const result = await client.callTool({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'hello' } });
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain('this caller cannot answer');
    } finally {
      await client.close();
    }
    const plain = await fetch(new URL('/tools/invoke', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'everything_trigger-sampling-request', arguments: { prompt: 'hello' } }),
    });
    expect(((await plain.json()) as Record<string, any>).error).toMatchObject({ code: 'input_unavailable' });
  });

  it('asks a 2026-07-28 client by input_required, and completes when it calls again with the answer', async () => {
    const client = new ClientV2(INFO, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params);
      return ANSWER;
    });
    await client.connect(new TransportV2(url));
    try {
      const result = await client.callTool({ name: 'everything_trigger-elicitation-request', arguments: {} });
      expect(asked).toHaveLength(1);
      expect(textOf(result)).toContain('Ada Lovelace');
    } finally {
      await client.close();
    }
  });

  it('holds an HTTP task in input_required with the server’s question, and runs it again with the answer', async () => {
    const id = await startTask(base, 'everything_trigger-sampling-request', { prompt: 'a task question' });
    const waiting = await until('the task waits for input', async () => {
      const task = (await (await fetch(new URL(`/tasks/${id}`, base))).json()) as Record<string, any>;
      return task.status === 'input_required' ? task : null;
    });
    expect(waiting.input_requests).toEqual({ sample_1: { method: 'sampling/createMessage', params: expect.objectContaining({ maxTokens: 100 }) } });
    const answered = await fetch(new URL(`/tasks/${id}/input`, base), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input_responses: { sample_1: COMPLETION } }),
    });
    expect(answered.status).toBe(200);
    const done = await until('the task completes', async () => {
      const task = (await (await fetch(new URL(`/tasks/${id}?wait_ms=1000`, base))).json()) as Record<string, any>;
      return task.status === 'completed' ? task : null;
    });
    expect(JSON.stringify(done.result)).toContain('forty-two');
  });
});

describe.each(['stdio', 'Streamable HTTP'] as const)('a server that logs, asks and runs tasks inside its calls, over %s', (transport) => {
  let app: FastifyInstance;
  let url: URL;
  let base: string;
  beforeAll(async () => {
    let entry: Record<string, unknown> = stdioServer('relay', RELAYING);
    if (transport === 'Streamable HTTP') {
      entry = { source: 'relay', url: (await startMcpHttp('relaying-server', RELAYING, ['--http'])).url };
    }
    app = await makeMcpApp('redis', [entry]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
    url = new URL('/mcp', base);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it("cancels the server's task when toolport's task that follows it is cancelled", async () => {
    const statuses = async () => {
      const response = await fetch(new URL('/tools/invoke', base), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'relay_task_statuses', arguments: {} }),
      });
      return JSON.parse(((await response.json()) as { value: unknown; message: string }).message) as Record<string, string>;
    };
    const tag = `held-${transport}`;
    const started = await fetch(new URL('/tools/invoke', base), {
      method: 'POST',
      headers: { 'content-type': 'application/json', prefer: 'respond-async' },
      body: JSON.stringify({ name: 'relay_hold', arguments: { tag } }),
    });
    expect(started.status).toBe(202);
    const { task_id: id } = (await started.json()) as { task_id: string };
    await until("the server's task runs", async () => (await statuses())[tag] === 'working');
    const cancelled = await fetch(new URL(`/tasks/${id}`, base), { method: 'DELETE' });
    expect(cancelled.status).toBe(200);
    await until("the server's task is cancelled", async () => (await statuses())[tag] === 'cancelled');
  });

  it("answers a refused resources/read or prompts/get with the server's own error code, message and data", async () => {
    const client = await answeringClient(url, []);
    try {
      expect((await client.readResource({ uri: 'toolport://relay/notes://1' })).contents).toEqual([
        { uri: 'toolport://relay/notes://1', text: 'the first note' },
      ]);
      await expect(client.readResource({ uri: 'toolport://relay/notes://7' })).rejects.toMatchObject({
        code: -32002,
        message: 'MCP error -32002: no note 7',
        data: { uri: 'notes://7' },
      });
      await expect(client.getPrompt({ name: 'relay_refused' })).rejects.toMatchObject({
        code: -32050,
        message: 'MCP error -32050: this prompt is refused by its server',
        data: { reason: 'quota' },
      });
    } finally {
      await client.close();
    }
  });

  it("relays the server's log message to the MCP client that made the call", async () => {
    const client = await answeringClient(url, []);
    const logged: Record<string, unknown>[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => void logged.push(params));
    try {
      const result = await client.callTool({ name: 'relay_note', arguments: { text: 'disk almost full' } });
      expect(textOf(result)).toBe('noted');
      await until('the log message arrives', () => logged.length > 0);
      expect(logged).toEqual([expect.objectContaining({ level: 'warning', data: 'disk almost full' })]);
    } finally {
      await client.close();
    }
  });

  it('asks each caller only its own call’s questions, two calls in flight', async () => {
    const asked: Asked[][] = [[], []];
    const clients = await Promise.all(asked.map((each) => answeringClient(url, each)));
    try {
      // The first call asks while both are in flight; the second asks once the first has ended.
      const [first, second] = await Promise.all([
        clients[0]!.callTool({ name: 'relay_ask_model', arguments: { prompt: 'first caller', wait_ms: 300 } }),
        clients[1]!.callTool({ name: 'relay_ask_model', arguments: { prompt: 'second caller', wait_ms: 1000 } }),
      ]);
      expect(asked[1]!.map((request) => JSON.stringify(request.params.messages))).toEqual([expect.stringContaining('second caller')]);
      expect(textOf(second)).toBe('the model said: forty-two');
      if (transport === 'Streamable HTTP') {
        // Each question comes on its own call's stream.
        expect(asked[0]!.map((request) => JSON.stringify(request.params.messages))).toEqual([expect.stringContaining('first caller')]);
        expect(textOf(first)).toBe('the model said: forty-two');
      } else {
        // Over stdio nothing says whose question it is: with two calls in flight it is refused, not guessed.
        expect(asked[0]).toEqual([]);
        expect(textOf(first)).toContain('no completion');
      }
    } finally {
      await Promise.all(clients.map((client) => client.close()));
    }
  });
});
