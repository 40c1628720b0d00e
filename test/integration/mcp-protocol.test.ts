/** POST /mcp on the wire: protocol faults and their codes, both eras' rules, batches, 405s. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';
import { started } from '../helpers/tools.ts';

const MODERN = '2026-07-28';
const envelope = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };
const modernHeaders = (method: string, extra: Record<string, string> = {}) => ({ 'mcp-protocol-version': MODERN, 'mcp-method': method, ...extra });

describe('POST /mcp protocol', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory');
  });
  afterAll(() => app.close());

  async function rpc(body: unknown, headers: Record<string, string> = {}) {
    const response = await app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.statusCode, headers: response.headers, text: response.body, body: response.body === '' ? null : response.json() };
  }

  describe('JSON-RPC faults', () => {
    it('answers a body that is not JSON with -32700 parse error (HTTP 400, id null)', async () => {
      for (const body of ['{"jsonrpc":', '', '[1,2']) {
        const { status, body: answer } = await rpc(body);
        expect(status).toBe(400);
        expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
      }
    });

    it('answers a message that is not JSON-RPC 2.0 with -32600 invalid request, keeping its id', async () => {
      for (const [body, id] of [
        [{ jsonrpc: '1.0', id: 1, method: 'ping' }, 1],
        [{ jsonrpc: '2.0', id: 'a' }, 'a'],
        [{ jsonrpc: '2.0', id: 2, method: 7 }, 2],
        [{ jsonrpc: '2.0', id: 3, method: 'ping', params: [1] }, 3],
        [{ jsonrpc: '2.0', id: null, method: 'ping' }, null],
        ['"just a string"', null],
      ] as const) {
        const { status, body: answer } = await rpc(body);
        expect(status).toBe(400);
        expect(answer).toMatchObject({ jsonrpc: '2.0', id, error: { code: -32600 } });
      }
    });

    it('answers an unknown method with -32601 in-band, and a tools/call without a name with -32602', async () => {
      const unknown = await rpc({ jsonrpc: '2.0', id: 4, method: 'roots/list' });
      expect(unknown.status).toBe(200);
      expect(unknown.body).toMatchObject({ id: 4, error: { code: -32601 } });
      const noName = await rpc({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { arguments: {} } });
      expect(noName.status).toBe(200);
      expect(noName.body).toMatchObject({ id: 5, error: { code: -32602 } });
      const noVersion = await rpc({ jsonrpc: '2.0', id: 6, method: 'initialize', params: {} });
      expect(noVersion.body).toMatchObject({ id: 6, error: { code: -32602 } });
    });

    it('answers a malformed X-Timeout-Ms or session header with -32600 (HTTP 400)', async () => {
      const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' } } };
      expect((await rpc(call, { 'x-timeout-ms': 'soon' })).body).toMatchObject({ id: 7, error: { code: -32600, message: /X-Timeout-Ms/ } });
      expect((await rpc(call, { 'mcp-session-id': 'bad id!' })).status).toBe(400);
    });

    it('answers GET and DELETE with 405 and Allow: POST', async () => {
      for (const method of ['GET', 'DELETE'] as const) {
        const response = await app.inject({ method, url: '/mcp', headers: { accept: 'text/event-stream' } });
        expect(response.statusCode).toBe(405);
        expect(response.headers.allow).toBe('POST');
      }
    });
  });

  describe('the handshake era', () => {
    it('keeps an excluded value out of the text but gives it as structuredContent', async () => {
      const { body } = await rpc({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'secret', arguments: {} } });
      expect(body.result).toEqual({ content: [{ type: 'text', text: 'stored' }], structuredContent: { token: 'hidden-from-model' }, isError: false });
    });

    it('negotiates the version: a known one is echoed, an unknown one gets the newest', async () => {
      for (const [asked, answered] of [
        ['2025-03-26', '2025-03-26'],
        ['2024-11-05', '2024-11-05'],
        ['2099-01-01', '2025-11-25'],
      ]) {
        const { body } = await rpc({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 't', version: '1' } },
        });
        expect(body.result).toEqual({
          protocolVersion: answered,
          capabilities: {
            tools: { listChanged: false },
            resources: { subscribe: true, listChanged: false },
            prompts: { listChanged: false },
            completions: {},
            logging: {},
            tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
          },
          serverInfo: { name: 'toolport', version: expect.any(String) },
        });
      }
    });

    it('accepts notifications with 202 and no body, and answers ping', async () => {
      const initialized = await rpc({ jsonrpc: '2.0', method: 'notifications/initialized' });
      expect(initialized.status).toBe(202);
      expect(initialized.text).toBe('');
      expect((await rpc({ jsonrpc: '2.0', id: 9, method: 'ping' })).body).toEqual({ jsonrpc: '2.0', id: 9, result: {} });
    });

    it('refuses an MCP-Protocol-Version header it does not speak with HTTP 400', async () => {
      const { status, body } = await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, { 'mcp-protocol-version': '2023-01-01' });
      expect(status).toBe(400);
      expect(body.error.code).toBe(-32600);
    });

    it('answers a batch (2025-03-26) with one response per request, in order, and errors for bad elements', async () => {
      const { status, body } = await rpc(
        [
          { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { name: 'echo', arguments: { text: 'one' } } },
          { jsonrpc: '2.0', method: 'notifications/initialized' },
          { jsonrpc: '2.0', id: 'b', method: 'nope' },
          { jsonrpc: '1.0', id: 'c', method: 'ping' },
          { jsonrpc: '2.0', id: 'd', method: 'ping' },
        ],
        { 'mcp-protocol-version': '2025-03-26' },
      );
      expect(status).toBe(200);
      expect(body.map((r: { id: string }) => r.id)).toEqual(['a', 'b', 'c', 'd']);
      expect(body[0].result.structuredContent).toEqual({ text: 'one' });
      expect(body[1].error.code).toBe(-32601);
      expect(body[2].error.code).toBe(-32600);
      expect(body[3].result).toEqual({});
      expect((await rpc([{ jsonrpc: '2.0', method: 'notifications/initialized' }])).status).toBe(202);
    });

    it('cancels only the call of a batch that notifications/cancelled names', async () => {
      const version = { 'mcp-protocol-version': '2025-03-26' };
      // x ends only when cancelled; y ends by itself.
      const starts = started.size;
      const running = rpc(
        [
          { jsonrpc: '2.0', id: 'x', method: 'tools/call', params: { name: 'watch_abort', arguments: {} } },
          { jsonrpc: '2.0', id: 'y', method: 'tools/call', params: { name: 'slow', arguments: { ms: 400, tag: 'y' } } },
        ],
        version,
      );
      await until('x starts', () => started.size > starts);
      const notice = await rpc({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'x', reason: 'changed my mind' } }, version);
      expect(notice.status).toBe(202);
      const { status, body } = await running;
      expect(status).toBe(200);
      expect(body.map((r: { id: string }) => r.id)).toEqual(['x', 'y']);
      expect(body[0].result.isError).toBe(true);
      expect(body[1].result).toMatchObject({ isError: false, structuredContent: { tag: 'y', waited: 400 } });
    });

    it('refuses batches in versions without them, and empty batches, with -32600', async () => {
      const late = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }], { 'mcp-protocol-version': '2025-06-18' });
      expect(late.status).toBe(400);
      expect(late.body).toMatchObject({ id: null, error: { code: -32600, message: /batches/ } });
      expect((await rpc([])).body).toMatchObject({ error: { code: -32600 } });
    });
  });

  describe('the stateless revision 2026-07-28', () => {
    it('answers server/discover with the versions, capabilities and server info', async () => {
      const { status, body } = await rpc({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: envelope } }, modernHeaders('server/discover'));
      expect(status).toBe(200);
      expect(body.result).toEqual({
        resultType: 'complete',
        supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
        capabilities: {
          tools: { listChanged: false },
          resources: { subscribe: true, listChanged: false },
          prompts: { listChanged: false },
          completions: {},
          logging: {},
          extensions: { 'io.modelcontextprotocol/tasks': {} },
        },
        ttlMs: 0,
        cacheScope: 'private',
        _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'toolport', version: expect.any(String) } },
      });
    });

    it('marks results with resultType and cache hints', async () => {
      const list = await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: envelope } }, modernHeaders('tools/list'));
      expect(list.body.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
      const call = await rpc(
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'echo', arguments: { text: 'é' }, _meta: envelope } },
        modernHeaders('tools/call', { 'mcp-name': `=?base64?${Buffer.from('echo').toString('base64')}?=` }),
      );
      expect(call.body.result).toMatchObject({ resultType: 'complete', isError: false, structuredContent: { text: 'é' } });
    });

    it('refuses headers that disagree with the body, or are missing, with -32020 (HTTP 400)', async () => {
      const call = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'echo', arguments: { text: 'x' }, _meta: envelope } };
      const headerSets: Record<string, string>[] = [
        { 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
        { 'mcp-protocol-version': '2025-11-25', 'mcp-method': 'tools/call', 'mcp-name': 'echo' },
        modernHeaders('tools/list', { 'mcp-name': 'echo' }),
        modernHeaders('tools/call'),
        modernHeaders('tools/call', { 'mcp-name': 'other' }),
      ];
      for (const headers of headerSets) {
        const { status, body } = await rpc(call, headers);
        expect(status).toBe(400);
        expect(body).toMatchObject({ id: 4, error: { code: -32020 } });
      }
    });

    it('refuses an unsupported protocol version with -32022 naming the supported ones', async () => {
      const meta = { ...envelope, 'io.modelcontextprotocol/protocolVersion': '2027-01-01' };
      const { status, body } = await rpc(
        { jsonrpc: '2.0', id: 5, method: 'tools/list', params: { _meta: meta } },
        { ...modernHeaders('tools/list'), 'mcp-protocol-version': '2027-01-01' },
      );
      expect(status).toBe(400);
      expect(body.error).toMatchObject({ code: -32022, data: { requested: '2027-01-01', supported: expect.arrayContaining([MODERN, '2025-11-25']) } });
    });

    it('refuses a missing or broken _meta envelope with -32602 (HTTP 400)', async () => {
      const noCapabilities = await rpc(
        { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': MODERN } } },
        modernHeaders('tools/list'),
      );
      expect(noCapabilities.status).toBe(400);
      expect(noCapabilities.body.error.code).toBe(-32602);
      const noEnvelope = await rpc({ jsonrpc: '2.0', id: 7, method: 'tools/list' }, modernHeaders('tools/list'));
      expect(noEnvelope.status).toBe(400);
      expect(noEnvelope.body.error.code).toBe(-32602);
    });

    it('has no initialize or ping (-32601), and refuses batches', async () => {
      const init = await rpc(
        { jsonrpc: '2.0', id: 8, method: 'initialize', params: { protocolVersion: MODERN, _meta: envelope } },
        modernHeaders('initialize'),
      );
      expect(init.body).toMatchObject({ id: 8, error: { code: -32601 } });
      const batch = await rpc([{ jsonrpc: '2.0', id: 9, method: 'tools/list', params: { _meta: envelope } }]);
      expect(batch.status).toBe(400);
      expect(batch.body.error.code).toBe(-32600);
    });
  });
});
