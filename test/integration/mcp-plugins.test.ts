/**
 * What a plugin reaches over MCP, with the official clients against real listening replicas on the
 * tests' Redis: context.log (notifications/message, logging/setLevel), context.elicit and
 * context.sample (inside the answer stream in 2025-11-25, by input_required on another replica in
 * 2026-07-28, through an HTTP task's input_required, input_unavailable otherwise), and the
 * resources, templates, prompts, completions and subscriptions of defineResource,
 * defineResourceTemplate and definePrompt.
 */
import { Writable } from 'node:stream';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { startTask, until } from '../helpers/tasks.ts';
import { defineResource, defineTool } from '../../src/index.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/conformance-plugin.ts', import.meta.url));
const INFO = { name: 'toolport-test', version: '1.0.0' };
const ACCEPT = { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } } as const;

describe('MCP for plugins: logging, elicitation, sampling, resources and prompts', () => {
  const replicas: FastifyInstance[] = [];
  const urls: URL[] = [];
  const logLines: Record<string, unknown>[] = [];
  /** Told when the clock resource changes. */
  const clockWatchers = new Set<() => void>();

  beforeAll(async () => {
    const prefix = `test:${randomUUID().slice(0, 8)}:`;
    const logger = pino(
      { level: 'debug' },
      new Writable({
        write(chunk, _encoding, done) {
          for (const line of String(chunk).split('\n').filter(Boolean)) logLines.push(JSON.parse(line) as Record<string, unknown>);
          done();
        },
      }),
    );
    for (const _ of [0, 1]) {
      const app = await makeApp('redis', {
        env: { TOOL_PLUGINS: FIXTURES, KEY_PREFIX: prefix },
        logger,
        register: (registry) => {
          registry.registerTool(
            defineTool({
              name: 'log_every_level',
              description: 'Logs at debug, info, warning and error.',
              parameters: { type: 'object', properties: {} },
              handler: (_params, context) => {
                for (const level of ['debug', 'info', 'warning', 'error'] as const) context.log(level, `a ${level} message`, { level });
                return { message: 'logged' };
              },
            }),
          );
          registry.registerEntry(
            defineResource({
              uri: 'test://clock',
              name: 'clock',
              mimeType: 'text/plain',
              read: () => new Date().toISOString(),
              watch(changed) {
                clockWatchers.add(changed);
                return () => clockWatchers.delete(changed);
              },
            }),
          );
        },
      });
      const base = await app.listen({ port: 0, host: '127.0.0.1' });
      replicas.push(app);
      urls.push(new URL('/mcp', base));
    }
  }, 60_000);

  afterAll(() => Promise.all(replicas.map((app) => app.close())));

  async function v1(capabilities: Record<string, unknown> = {}): Promise<ClientV1> {
    const client = new ClientV1(INFO, { capabilities });
    await client.connect(new TransportV1(urls[0]!));
    return client;
  }

  it('delivers context.log as notifications/message at the level the session set, and writes it to the logs', async () => {
    const client = await v1();
    const heard: { level: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void heard.push({ level: n.params.level, data: n.params.data }));
    try {
      await client.setLoggingLevel('warning');
      expect((await client.callTool({ name: 'log_every_level', arguments: {} })).isError).toBe(false);
      expect(heard.map((h) => h.level)).toEqual(['warning', 'error']);
      expect(heard[0]!.data).toEqual({ message: 'a warning message', data: { level: 'warning' } });
      await client.setLoggingLevel('debug');
      heard.length = 0;
      await client.callTool({ name: 'log_every_level', arguments: {} });
      expect(heard.map((h) => h.level)).toEqual(['debug', 'info', 'warning', 'error']);
      expect(logLines.some((line) => line.msg === 'a warning message' && line.clientLevel === 'warning' && line.tool === 'log_every_level')).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('2025-11-25: context.elicit and context.sample ask the client inside the call, which answers on another replica too', async () => {
    const client = new ClientV1(INFO, { capabilities: { elicitation: {}, sampling: {} } });
    // Every POST after initialize goes to the other replica: the answer lands where the call does not wait.
    let posts = 0;
    const alternating: typeof fetch = (input, init) => fetch(posts++ % 2 === 0 ? input : String(input).replace(urls[0]!.origin, urls[1]!.origin), init);
    await client.connect(new TransportV1(urls[0]!, { fetch: alternating }));
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(String(request.params.message));
      return ACCEPT;
    });
    client.setRequestHandler(CreateMessageRequestSchema, (request) => ({
      role: 'assistant',
      content: { type: 'text', text: `echo: ${(request.params.messages[0]!.content as { text: string }).text}` },
      model: 'test-model',
    }));
    try {
      const elicited = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you?' } });
      expect(asked).toEqual(['Who are you?']);
      expect(JSON.stringify(elicited.content)).toContain('ada@example.com');
      const sampled = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
      expect(sampled.content).toEqual([{ type: 'text', text: 'LLM response: echo: hello' }]);
    } finally {
      await client.close();
    }
  });

  it('answers input_unavailable when the client declared neither elicitation nor sampling', async () => {
    const client = await v1();
    try {
      for (const [name, args] of [
        ['test_elicitation', { message: 'Who?' }],
        ['test_sampling', { prompt: 'hi' }],
      ] as const) {
        const answer = await client.callTool({ name, arguments: args });
        expect(answer.isError).toBe(true);
        expect(JSON.stringify(answer.content)).toMatch(/cannot answer/);
      }
    } finally {
      await client.close();
    }
  });

  it('2026-07-28: context.elicit answers input_required, and the retry on another replica completes through the sealed state', async () => {
    const used = new Set<string>();
    let posts = 0;
    const roundRobin: typeof fetch = (input, init) => {
      const url = urls[posts++ % 2]!;
      used.add(url.origin);
      return fetch(url, init);
    };
    const client = new ClientV2(INFO, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const asked: unknown[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(request.params);
      return ACCEPT;
    });
    await client.connect(new TransportV2(urls[0]!, { fetch: roundRobin }));
    try {
      const answer = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Who are you, statelessly?' } });
      expect(asked).toHaveLength(1);
      expect(asked[0]).toMatchObject({ mode: 'form', message: 'Who are you, statelessly?' });
      expect(answer.isError).toBeFalsy();
      expect(JSON.stringify(answer.content)).toContain('ada@example.com');
      expect(used.size).toBe(2);
    } finally {
      await client.close();
    }
  });

  it('holds an HTTP task in input_required with what the handler asked, and runs it again with the answer', async () => {
    const id = await startTask(urls[0]!, 'test_elicitation', { message: 'Who runs this task?' });
    const waiting = await until('the task waits for input', async () => {
      const task = (await (await fetch(new URL(`/tasks/${id}`, urls[1]))).json()) as Record<string, any>;
      return task.status === 'input_required' ? task : null;
    });
    expect(waiting.input_requests).toEqual({
      elicit_1: { method: 'elicitation/create', params: expect.objectContaining({ mode: 'form', message: 'Who runs this task?' }) },
    });
    const answered = await fetch(new URL(`/tasks/${id}/input`, urls[1]), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ input_responses: { elicit_1: ACCEPT } }),
    });
    expect(answered.status).toBe(200);
    const done = await until('the task completes', async () => {
      const task = (await (await fetch(new URL(`/tasks/${id}?wait_ms=1000`, urls[0]))).json()) as Record<string, any>;
      return task.status === 'completed' ? task : null;
    });
    expect(JSON.stringify(done.result)).toContain('ada@example.com');
  });

  it('serves resources, templates, prompts and completions, and tells a subscriber of a change', async () => {
    const client = await v1();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    try {
      const { resources } = await client.listResources();
      expect(resources).toContainEqual(expect.objectContaining({ uri: 'test://static-text', name: 'static_text', mimeType: 'text/plain' }));
      expect((await client.readResource({ uri: 'test://static-text' })).contents).toEqual([
        { uri: 'test://static-text', mimeType: 'text/plain', text: 'This is the content of the static text resource.' },
      ]);
      expect((await client.listResourceTemplates()).resourceTemplates).toContainEqual(expect.objectContaining({ uriTemplate: 'test://template/{id}/data' }));
      const [data] = (await client.readResource({ uri: 'test://template/456/data' })).contents as { text: string }[];
      expect(JSON.parse(data!.text)).toMatchObject({ id: '456' });
      const { prompts } = await client.listPrompts();
      expect(prompts.find((p) => p.name === 'test_prompt_with_arguments')?.arguments).toHaveLength(2);
      const prompt = await client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } });
      expect(prompt.messages[0]!.content).toEqual({ type: 'text', text: "Prompt with arguments: arg1='a', arg2='b'" });
      await expect(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a' } })).rejects.toMatchObject({ code: -32602 });
      const words = await client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'par' } });
      expect(words.completion.values).toEqual(['paris', 'park', 'party']);
      const ids = await client.complete({ ref: { type: 'ref/resource', uri: 'test://template/{id}/data' }, argument: { name: 'id', value: '4' } });
      expect(ids.completion.values).toEqual(['456']);
      await client.subscribeResource({ uri: 'test://clock' });
      for (const changed of clockWatchers) changed();
      await until('the update arrives', async () => (updated.includes('test://clock') ? true : null));
      await client.unsubscribeResource({ uri: 'test://clock' });
      updated.length = 0;
      for (const changed of clockWatchers) changed();
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(updated).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('resources and prompts follow the access rules', () => {
  let app: FastifyInstance;
  let url: URL;
  const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');

  beforeAll(async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'toolport-keys-')), 'keys.json');
    writeFileSync(file, JSON.stringify([{ id: 'static-only', key_sha256: sha('static-secret'), tools: ['static_*', 'test_simple_*'] }]));
    app = await makeApp('memory', { env: { TOOL_PLUGINS: FIXTURES, API_KEYS_FILE: file } });
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  });

  afterAll(() => app.close());

  it('lists, reads, gets and completes only what the caller may see', async () => {
    const client = new ClientV1(INFO);
    await client.connect(new TransportV1(url, { requestInit: { headers: { authorization: 'Bearer static-secret' } } }));
    try {
      expect((await client.listResources()).resources.map((r) => r.name).sort()).toEqual(['static_binary', 'static_text']);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
      expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['test_simple_prompt']);
      expect((await client.readResource({ uri: 'test://static-text' })).contents).toHaveLength(1);
      await expect(client.readResource({ uri: 'test://watched-resource' })).rejects.toMatchObject({ code: -32002 });
      await expect(client.readResource({ uri: 'test://template/1/data' })).rejects.toMatchObject({ code: -32002 });
      await expect(client.subscribeResource({ uri: 'test://watched-resource' })).rejects.toMatchObject({ code: -32002 });
      await expect(client.getPrompt({ name: 'test_prompt_with_arguments', arguments: { arg1: 'a', arg2: 'b' } })).rejects.toMatchObject({ code: -32602 });
      await expect(
        client.complete({ ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, argument: { name: 'arg1', value: 'p' } }),
      ).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
  });
});

describe('isolated handlers reach the client the same way (TOOL_ISOLATION=worker)', () => {
  let app: FastifyInstance;
  let url: URL;

  beforeAll(async () => {
    app = await makeApp('memory', { env: { TOOL_PLUGINS: FIXTURES, TOOL_ISOLATION: 'worker', WORKER_POOL_SIZE: '1' } });
    url = new URL('/mcp', await app.listen({ port: 0, host: '127.0.0.1' }));
  }, 60_000);

  afterAll(() => app.close());

  it('logs to the client and elicits from a worker, live in 2025-11-25 and by input_required in 2026-07-28', async () => {
    const v1 = new ClientV1(INFO, { capabilities: { elicitation: {} } });
    await v1.connect(new TransportV1(url));
    const heard: string[] = [];
    v1.setNotificationHandler(
      LoggingMessageNotificationSchema,
      (n) => void heard.push(String((n.params.data as { message?: string }).message ?? n.params.data)),
    );
    v1.setRequestHandler(ElicitRequestSchema, () => ACCEPT);
    const v2 = new ClientV2(INFO, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: '2026-07-28' } } });
    v2.setRequestHandler('elicitation/create', () => ACCEPT);
    await v2.connect(new TransportV2(url));
    try {
      await v1.setLoggingLevel('debug');
      await v1.callTool({ name: 'test_tool_with_logging', arguments: {} });
      expect(heard).toEqual(['Tool execution started', 'Tool processing data', 'Tool execution completed']);
      expect(JSON.stringify((await v1.callTool({ name: 'test_elicitation', arguments: { message: 'From a worker?' } })).content)).toContain('ada@example.com');
      expect(JSON.stringify((await v2.callTool({ name: 'test_elicitation', arguments: { message: 'Statelessly?' } })).content)).toContain('ada@example.com');
    } finally {
      await Promise.all([v1.close(), v2.close()]);
    }
  });
});
