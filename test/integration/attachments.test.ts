/**
 * A tool whose result carries content blocks besides text (an image and an embedded resource): every
 * way out keeps them — the JSON answer of each format, a server-sent `result` event, an MCP client
 * and the typed client — and the formats that carry only text name them in `content`.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolportClient } from '../../src/client/index.ts';
import { makeApp } from '../helpers/app.ts';
import { connectMcp } from '../helpers/mcp-client.ts';

const IMAGE = { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' };
const RESOURCE = { type: 'resource', resource: { uri: 'file:///report.csv', mimeType: 'text/csv', text: 'a,b\n1,2\n' } };
const ATTACHMENTS = [IMAGE, RESOURCE];
const NAMED = '[attached: image image/png]\n[attached: resource text/csv file:///report.csv]';

let app: FastifyInstance;
let base: string;
beforeAll(async () => {
  app = await makeApp('memory', {
    register: (registry) => {
      registry.registerTool({
        name: 'chart',
        description: 'Draws a chart and attaches its data.',
        parameters: { type: 'object', properties: {} },
        handler: () => ({ message: 'Drawn.', value: { points: 2 }, success: true, exclude_value_from_context: false, attachments: ATTACHMENTS }),
      });
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});
afterAll(() => app.close());

async function invoke(body: unknown, query = ''): Promise<Record<string, any>> {
  const response = await fetch(`${base}/tools/invoke${query}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, any>;
}

/** One call of `chart` in each format: the body, and where that format's answer puts the result and the model's message. */
const ONE_CALL: [string, unknown, string][] = [
  ['native', { name: 'chart', arguments: {} }, ''],
  ['openai', { id: 'call_1', type: 'function', function: { name: 'chart', arguments: '{}' } }, ''],
  ['openai-responses', { type: 'function_call', call_id: 'call_1', name: 'chart', arguments: '{}' }, ''],
  ['anthropic', { type: 'tool_use', id: 'toolu_1', name: 'chart', input: {} }, ''],
  ['gemini', { functionCall: { name: 'chart', args: {} } }, ''],
  ['mcp', { name: 'chart', arguments: {} }, '?format=mcp'],
];

describe('a result with attachments', () => {
  it('keeps them in the JSON answer of every format, one call and a turn, and names them in content', async () => {
    for (const [format, call, query] of ONE_CALL) {
      const result = await invoke(call, query);
      expect(result.attachments, format).toEqual(ATTACHMENTS);
      expect(result.content, format).toBe(`Drawn.\n${NAMED}\n\n{"points":2}`);
    }
    const turn = await invoke({
      calls: [
        { name: 'chart', arguments: {} },
        { name: 'echo', arguments: { text: 'hi' } },
      ],
    });
    expect(turn.results[0].attachments).toEqual(ATTACHMENTS);
    expect(turn.results[1]).not.toHaveProperty('attachments');
    const anthropicTurn = await invoke({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'chart', input: {} }] });
    expect(anthropicTurn.results[0].attachments).toEqual(ATTACHMENTS);
  });

  it('passes them in the message of the formats whose message holds blocks: MCP content, the native ToolResult', async () => {
    const mcp = await invoke({ name: 'chart', arguments: {} }, '?format=mcp');
    expect(mcp.tool_message.content).toEqual([{ type: 'text', text: `Drawn.\n${NAMED}\n\n{"points":2}` }, ...ATTACHMENTS]);
    const native = await invoke({ name: 'chart', arguments: {} });
    expect(native.tool_message).toEqual({
      message: 'Drawn.',
      value: { points: 2 },
      success: true,
      exclude_value_from_context: false,
      attachments: ATTACHMENTS,
    });
  });

  it('keeps them on POST /tools/{name}/invoke, as JSON and as the server-sent result event', async () => {
    const json = await fetch(`${base}/tools/chart/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(((await json.json()) as Record<string, unknown>).attachments).toEqual(ATTACHMENTS);
    const sse = await fetch(`${base}/tools/chart/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: '{}',
    });
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    const text = await sse.text();
    const result = text.split('\n\n').find((block) => block.startsWith('event: result'));
    expect(result, text).toBeDefined();
    const data = JSON.parse(
      result!
        .split('\n')
        .find((line) => line.startsWith('data: '))!
        .slice(6),
    ) as Record<string, unknown>;
    expect(data.attachments).toEqual(ATTACHMENTS);
  });

  it('reaches an MCP client (the official SDK) as content blocks after the text', async () => {
    const client = await connectMcp('v1', new URL('/mcp', base));
    try {
      const result = await client.callTool('chart', {});
      expect(result.content).toEqual([{ type: 'text', text: `Drawn.\n${NAMED}\n\n{"points":2}` }, ...ATTACHMENTS]);
      expect(result.isError).toBe(false);
    } finally {
      await client.close();
    }
  });

  it('reaches the typed client, typed', async () => {
    const client = new ToolportClient({ baseUrl: base });
    const result = await client.invoke('chart');
    expect(result.attachments).toEqual(ATTACHMENTS);
    const first = result.attachments?.[0];
    expect(first?.type).toBe('image');
    const turn = await client.invokeTurn(
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'chart', arguments: '{}' } }] },
      { format: 'openai' },
    );
    expect(turn.results[0]?.attachments).toEqual(ATTACHMENTS);
  });
});
