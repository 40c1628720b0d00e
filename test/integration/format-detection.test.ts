/** How a body's format is found, the 400s for bodies that hold no call, and turns run in parallel in every format. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post } from '../helpers/app.ts';

const FORMAT_NAMES = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'];

function expectNoToolCall(response: { status: number; headers: Record<string, unknown>; body: Record<string, any> }, ...mentions: string[]) {
  expect(response.status).toBe(400);
  expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(response.body.type).toBe('urn:toolport:problem:no-tool-call');
  for (const mention of mentions) expect(response.body.detail).toContain(mention);
}

/** One turn of eight calls to `slow` (100 ms each), in each format's shape. */
const slowTurns: Record<string, { url: string; body: unknown }> = {
  native: { url: '/tools/invoke', body: { calls: Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, name: 'slow', arguments: { ms: 100, tag: `t${i}` } })) } },
  openai: {
    url: '/tools/invoke',
    body: {
      role: 'assistant',
      tool_calls: Array.from({ length: 8 }, (_, i) => ({
        id: `c${i}`,
        type: 'function',
        function: { name: 'slow', arguments: JSON.stringify({ ms: 100, tag: `t${i}` }) },
      })),
    },
  },
  'openai-responses': {
    url: '/tools/invoke',
    body: {
      output: Array.from({ length: 8 }, (_, i) => ({
        type: 'function_call',
        call_id: `c${i}`,
        name: 'slow',
        arguments: JSON.stringify({ ms: 100, tag: `t${i}` }),
      })),
    },
  },
  anthropic: {
    url: '/tools/invoke',
    body: {
      role: 'assistant',
      content: Array.from({ length: 8 }, (_, i) => ({ type: 'tool_use', id: `c${i}`, name: 'slow', input: { ms: 100, tag: `t${i}` } })),
    },
  },
  gemini: {
    url: '/tools/invoke',
    body: { role: 'model', parts: Array.from({ length: 8 }, (_, i) => ({ functionCall: { id: `c${i}`, name: 'slow', args: { ms: 100, tag: `t${i}` } } })) },
  },
  mcp: { url: '/tools/invoke?format=mcp', body: { calls: Array.from({ length: 8 }, (_, i) => ({ name: 'slow', arguments: { ms: 100, tag: `t${i}` } })) } },
};

describe('format detection', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory');
  });
  afterAll(() => app.close());

  it('answers 400 naming every accepted shape when nothing is recognisable', async () => {
    const response = await post(app, { hello: 'world' });
    expectNoToolCall(response, ...FORMAT_NAMES, '"tool_calls"', '"function_call"', '"tool_use"', '"functionCall"', '?format=mcp');
  });

  it('answers 400 for a body with the shape of two formats, asking for ?format=', async () => {
    const body = {
      role: 'assistant',
      content: [{ type: 'tool_use', id: 't', name: 'echo', input: { text: 'a' } }],
      parts: [{ functionCall: { name: 'echo', args: { text: 'b' } } }],
    };
    expectNoToolCall(await post(app, body), 'anthropic', 'gemini', '?format=');
    const forced = await post(app, body, {}, '/tools/invoke?format=gemini');
    expect(forced.status).toBe(200);
    expect(forced.body.results[0].value).toEqual({ text: 'b' });
  });

  it('tells a Chat Completions message with a content array from an Anthropic message', async () => {
    const body = {
      role: 'assistant',
      content: [{ type: 'text', text: 'calling' }],
      tool_calls: [{ id: 'x', type: 'function', function: { name: 'echo', arguments: '{"text":"a"}' } }],
    };
    const { status, body: answer } = await post(app, body);
    expect(status).toBe(200);
    expect(answer.messages).toEqual([{ role: 'tool', tool_call_id: 'x', content: answer.results[0].content }]);
  });

  it('answers 400 for a turn with no call in it, naming the format and its shapes', async () => {
    expectNoToolCall(await post(app, { role: 'assistant', content: [{ type: 'text', text: 'hi' }] }), 'anthropic', '"tool_use"');
    expectNoToolCall(await post(app, { output: [{ type: 'message', content: [] }] }), 'openai-responses');
    expectNoToolCall(await post(app, { role: 'model', parts: [{ text: 'hi' }] }), 'gemini');
    expectNoToolCall(await post(app, { role: 'assistant', tool_calls: [] }), 'openai');
  });

  it('answers 400 for a malformed call item, saying which one', async () => {
    expectNoToolCall(await post(app, { role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { arguments: '{}' } }] }), 'tool_calls[0]');
    expectNoToolCall(await post(app, { role: 'assistant', tool_calls: [{ id: 'a', type: 'custom', custom: { name: 'x', input: '' } }] }), 'tool_calls[0]');
    expectNoToolCall(await post(app, { output: [{ type: 'function_call', call_id: 'c', arguments: '{}' }] }), 'output[0]');
    expectNoToolCall(
      await post(app, {
        role: 'assistant',
        content: [
          { type: 'text', text: 'x' },
          { type: 'tool_use', id: 't', input: {} },
        ],
      }),
      'content[1]',
    );
    expectNoToolCall(await post(app, { role: 'model', parts: [{ functionCall: 'echo' }] }), 'parts[0]');
    expectNoToolCall(await post(app, { calls: [{ arguments: {} }] }, {}, '/tools/invoke?format=mcp'), 'calls[0]');
  });

  it('answers 400 for a call without the id its provider always sends and its result must quote', async () => {
    expectNoToolCall(await post(app, { type: 'function', function: { name: 'echo', arguments: '{}' } }), 'the id is missing', '"id"');
    expectNoToolCall(await post(app, { output: [{ type: 'function_call', name: 'echo', arguments: '{}' }] }), 'output[0]', '"call_id"');
    expectNoToolCall(await post(app, { role: 'assistant', content: [{ type: 'tool_use', name: 'echo', input: {} }] }), 'content[0]', 'the id is missing');
    // Gemini ids are optional.
    expect((await post(app, { functionCall: { name: 'echo', args: { text: 'a' } } })).status).toBe(200);
  });

  it('answers 400 when ?format= names a format the body does not have', async () => {
    expectNoToolCall(
      await post(app, { name: 'echo', arguments: { text: 'a' } }, {}, '/tools/invoke?format=anthropic'),
      'not a anthropic tool call',
      '"tool_use"',
    );
    expectNoToolCall(await post(app, { hello: 1 }, {}, '/tools/invoke?format=native'), 'native');
  });

  it('answers 400 for an unknown ?format=', async () => {
    const response = await post(app, { name: 'echo', arguments: {} }, {}, '/tools/invoke?format=cobol');
    expect(response.status).toBe(400);
    expect(response.body.detail).toContain('openai-responses');
  });

  it.each(Object.keys(slowTurns))('runs a turn of 8 calls of 100 ms in parallel and keeps call order (%s)', async (format) => {
    const { url, body } = slowTurns[format]!;
    const started = performance.now();
    const response = await post(app, body, {}, url);
    const elapsed = performance.now() - started;
    expect(response.status).toBe(200);
    expect(response.body.results.map((r: { value: { tag: string } }) => r.value.tag)).toEqual(Array.from({ length: 8 }, (_, i) => `t${i}`));
    expect(elapsed).toBeLessThan(500);
  });
});
