/** What MCP clients met in the field: Allow on /mcp, resources/read of 2026-07-28, text said once. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { makeApp } from '../helpers/app.ts';

const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

let app: FastifyInstance;
beforeAll(async () => {
  app = await makeApp('memory', {
    env: { MAX_CONTENT_CHARS: '300' },
    register: (registry) => {
      registry.registerTool({
        name: 'wraps_text',
        description: 'Answers its text again inside its value, as servers that wrap their text do.',
        parameters: { type: 'object', properties: {} },
        handler: () => ok({ text: 'The answer is 42.', confidence: 0.9 }, 'The answer is 42.'),
      });
    },
  });
});
afterAll(() => app.close());

async function rpc(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const response = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 1, ...body }),
  });
  return response.json() as { result?: Record<string, any>; error?: { code: number; message: string } };
}

const modern = (method: string, params: Record<string, unknown>, name?: string) =>
  rpc(
    { method, params: { ...params, _meta: envelope } },
    { 'mcp-protocol-version': MODERN, 'mcp-method': method, ...(name !== undefined && { 'mcp-name': name }) },
  );

describe('/mcp methods', () => {
  it('answers OPTIONS, GET, HEAD and DELETE with 405 and Allow: POST, the one method it serves', async () => {
    for (const method of ['OPTIONS', 'GET', 'HEAD', 'DELETE'] as const) {
      const response = await app.inject({ method, url: '/mcp' });
      expect(response.statusCode, method).toBe(405);
      expect(response.headers.allow, method).toBe('POST');
    }
  });
});

describe('resources/read over 2026-07-28', () => {
  it('answers the whole of a cut result with resultType, ttlMs and cacheScope', async () => {
    const call = await modern('tools/call', { name: 'big', arguments: { size: 2000 } }, 'big');
    const link = (call.result!.content as { type: string; uri?: string }[]).find((block) => block.type === 'resource_link')!;
    const read = await modern('resources/read', { uri: link.uri }, link.uri);
    expect(read.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private', contents: [{ uri: link.uri, mimeType: 'text/plain' }] });
  });

  it('answers an unknown URI with -32602 (the handshake era keeps -32002)', async () => {
    const uri = 'toolport://results/00000000-0000-4000-8000-000000000000';
    expect((await modern('resources/read', { uri }, uri)).error).toMatchObject({ code: -32602, message: expect.stringMatching(/^Resource not found/) });
    expect((await rpc({ method: 'resources/read', params: { uri } }, { 'mcp-protocol-version': '2025-11-25' })).error).toMatchObject({ code: -32002 });
  });
});

describe('tools/call results', () => {
  it('say a message once: a value that repeats it is the text block alone', async () => {
    const { result } = await rpc({ method: 'tools/call', params: { name: 'wraps_text', arguments: {} } }, { 'mcp-protocol-version': '2025-11-25' });
    expect(result).toEqual({
      content: [{ type: 'text', text: '{"text":"The answer is 42.","confidence":0.9}' }],
      structuredContent: { text: 'The answer is 42.', confidence: 0.9 },
      isError: false,
    });
    const echoed = await rpc({ method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } }, { 'mcp-protocol-version': '2025-11-25' });
    expect(echoed.result!.content).toEqual([{ type: 'text', text: 'echoed\n\n{"text":"hi"}' }]);
  });
});
