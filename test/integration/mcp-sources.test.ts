/**
 * MCP servers behind toolport (docs/mcp-sources.md), over stdio: the reference server-everything and a small
 * server of our own, started by toolport as child processes. Their tools are listed in every
 * provider format and called through every path: structured and text results, an upstream error,
 * non-text blocks, progress over SSE and over /mcp.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from '../helpers/app.ts';
import { CHANGING, EVERYTHING, makeMcpApp, stdioServer } from '../helpers/mcp-upstreams.ts';

function parseEvents(text: string): { event: string; data: any }[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      return {
        event,
        data: JSON.parse(
          lines
            .filter((l) => l.startsWith('data: '))
            .map((l) => l.slice(6))
            .join('\n'),
        ),
      };
    });
}

describe('MCP servers over stdio', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeMcpApp('memory', [
      stdioServer('every', EVERYTHING, { tools: { 'get-sum': { idempotency: { strategy: 'auto', scope: 'global' }, timeout_ms: 5000 } } }, ['stdio']),
      stdioServer('own', CHANGING),
    ]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app?.close());

  it('lists the upstream tools as <source>_<tool> with schemas, output schemas, annotations and overrides', async () => {
    const { body } = await get(app, '/tools');
    const structured = body.tools.find((t: any) => t.name === 'every_get-structured-content');
    expect(structured).toMatchObject({
      description: 'Returns structured content along with an output schema for client data validation',
      parameters: { type: 'object', properties: { location: { enum: ['New York', 'Chicago', 'Los Angeles'] } }, required: ['location'] },
      result: { type: 'object', required: ['temperature', 'conditions', 'humidity'] },
      annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    });
    expect(structured.parameters.$schema).toBeUndefined();
    const sum = body.tools.find((t: any) => t.name === 'every_get-sum');
    expect(sum).toMatchObject({ idempotency: { strategy: 'auto', scope: 'global' }, timeout_ms: 5000 });
    expect(body.tools.map((t: any) => t.name)).toEqual(
      expect.arrayContaining(['every_echo', 'every_trigger-long-running-operation', 'own_greet', 'own_refuse']),
    );
    for (const tool of body.tools) expect(tool.description.length).toBeLessThanOrEqual(200);
  });

  it('lists them in every provider format', async () => {
    const shapes: Record<string, (tools: any[]) => any> = {
      openai: (tools) => tools.find((t) => t.function?.name === 'every_get-sum'),
      'openai-responses': (tools) => tools.find((t) => t.type === 'function' && t.name === 'every_get-sum'),
      anthropic: (tools) => tools.find((t) => t.name === 'every_get-sum' && t.input_schema),
      gemini: (tools) => tools.flatMap((t) => t.functionDeclarations ?? [t]).find((t: any) => t.name === 'every_get-sum'),
      mcp: (tools) => tools.find((t) => t.name === 'every_get-sum' && t.inputSchema),
    };
    for (const [format, find] of Object.entries(shapes)) {
      const { status, body } = await get(app, `/tools?format=${format}`);
      expect(status, format).toBe(200);
      expect(find(body.tools), format).toBeTruthy();
    }
    const mcp = (await get(app, '/tools?format=mcp')).body.tools.find((t: any) => t.name === 'every_get-structured-content');
    expect(mcp).toMatchObject({ outputSchema: { type: 'object' }, annotations: { readOnlyHint: true, idempotentHint: true } });
  });

  it('maps structuredContent to value and text to message', async () => {
    const structured = await post(app, { name: 'every_get-structured-content', arguments: { location: 'Chicago' } });
    expect(structured.body).toMatchObject({ success: true, value: { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 }, error: null });
    // The server's text block is the value's JSON: the model sees it once.
    expect(structured.body.content).toBe(structured.body.message);
    const text = await post(app, { name: 'every_echo', arguments: { message: 'hello upstream' } });
    expect(text.body).toMatchObject({ success: true, message: 'Echo: hello upstream', value: null, content: 'Echo: hello upstream' });
  });

  it('answers in each provider shape (openai, anthropic, gemini)', async () => {
    const openai = await post(app, {
      role: 'assistant',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'every_get-sum', arguments: '{"a":2,"b":3}' } }],
    });
    expect(openai.body.messages).toEqual([{ role: 'tool', tool_call_id: 'c1', content: 'The sum of 2 and 3 is 5.' }]);
    const anthropic = await post(app, { type: 'tool_use', id: 'tu1', name: 'every_echo', input: { message: 'x' } });
    expect(anthropic.body.tool_message).toEqual({ type: 'tool_result', tool_use_id: 'tu1', content: 'Echo: x', is_error: false });
    const gemini = await post(app, { functionCall: { name: 'every_echo', args: { message: 'y' } } });
    expect(gemini.body.tool_message.functionResponse).toMatchObject({ name: 'every_echo' });
  });

  it('refuses invalid arguments before reaching the server', async () => {
    const { body } = await post(app, { name: 'every_get-structured-content', arguments: { location: 'Paris' } });
    expect(body.error.code).toBe('invalid_arguments');
  });

  it('turns an upstream isError into handler_error with the server’s own text', async () => {
    const { body } = await post(app, { name: 'own_refuse', arguments: {} });
    expect(body).toMatchObject({ success: false, error: { code: 'handler_error', detail: 'the fixture refuses: quota exhausted' } });
    expect(body.content).toContain('the fixture refuses: quota exhausted');
  });

  it('passes other blocks through on ?format=mcp and names them in content for other formats', async () => {
    const mcp = await post(app, { name: 'every_get-tiny-image', arguments: {} }, {}, '/tools/invoke?format=mcp');
    const blocks = mcp.body.tool_message.content;
    expect(blocks[0].type).toBe('text');
    expect(blocks[1]).toMatchObject({ type: 'image', mimeType: 'image/png' });
    expect(blocks[1].data.length).toBeGreaterThan(100);
    const anthropic = await post(app, { type: 'tool_use', id: 'img', name: 'every_get-tiny-image', input: {} });
    expect(anthropic.body.content).toContain('[attached: image image/png]');
    expect(anthropic.body.tool_message.content).toContain('[attached: image image/png]');
  });

  it('runs an idempotent upstream tool once and replays it', async () => {
    const first = await post(app, { name: 'every_get-sum', arguments: { a: 40, b: 2 } });
    const again = await post(app, { name: 'every_get-sum', arguments: { a: 40, b: 2 } });
    expect(first.body).toMatchObject({ success: true, replayed: false, message: 'The sum of 40 and 2 is 42.' });
    expect(again.body).toMatchObject({ success: true, replayed: true, message: 'The sum of 40 and 2 is 42.', effect_id: first.body.effect_id });
  });

  it('relays upstream progress as SSE progress events on POST /tools/invoke', async () => {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ id: 'long', name: 'every_trigger-long-running-operation', arguments: { duration: 1, steps: 4 } }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = parseEvents(await response.text());
    const progress = events.filter((e) => e.event === 'progress').map((e) => e.data);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress.at(-1)).toEqual({ call_id: 'long', done: 4, total: 4 });
    expect(events.at(-1)!.event).toBe('result');
    expect(events.at(-1)!.data).toMatchObject({ success: true, message: expect.stringContaining('Long running operation completed') });
  });

  it('serves the upstream tools on its own /mcp to the official SDK client, progress included', async () => {
    const client = new Client({ name: 'toolport-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base)));
    try {
      const { tools } = await client.listTools();
      expect(tools.find((t) => t.name === 'every_get-structured-content')).toMatchObject({ outputSchema: { type: 'object' } });
      const structured = await client.callTool({ name: 'every_get-structured-content', arguments: { location: 'New York' } });
      expect(structured).toMatchObject({ isError: false, structuredContent: { temperature: 33, conditions: 'Cloudy', humidity: 82 } });
      const seen: number[] = [];
      const long = await client.callTool({ name: 'every_trigger-long-running-operation', arguments: { duration: 1, steps: 3 } }, undefined, {
        onprogress: ({ progress }) => seen.push(progress),
      });
      expect(long.isError).toBe(false);
      expect(seen.length).toBeGreaterThanOrEqual(2);
      expect(seen.at(-1)).toBe(3);
      const image = await client.callTool({ name: 'every_get-tiny-image', arguments: {} });
      expect((image.content as { type: string }[]).map((b) => b.type)).toEqual(['text', 'image']);
    } finally {
      await client.close();
    }
  });
});
