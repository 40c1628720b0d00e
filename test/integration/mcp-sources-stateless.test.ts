/**
 * A stateless MCP server of the official SDK answering JSON (a server and a transport per request),
 * reached over Streamable HTTP: its tools/call goes out without the SDK Client's Protocol, and still
 * answers as before — a result, the server's JSON-RPC error, and a tool with an output schema
 * checked by the SDK Client (such a tool is called through it).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { post } from '../helpers/app.ts';
import { makeMcpApp, startMcpHttp } from '../helpers/mcp-upstreams.ts';

const SERVER = new URL('../fixtures/mcp/stateless-json-server.mjs', import.meta.url).pathname;

describe('a stateless MCP server answering JSON', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    const { url } = await startMcpHttp('stateless JSON server', SERVER);
    app = await makeMcpApp('memory', [{ source: 'sl', url, timeout_ms: 10_000 }]);
  });
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it('answers calls, one after another and side by side', async () => {
    const answers = await Promise.all(['a', 'b', 'c', 'd'].map((text) => post(app, { name: 'sl_echo', arguments: { text } })));
    expect(answers.map((a) => a.body)).toEqual(
      ['a', 'b', 'c', 'd'].map((text) => expect.objectContaining({ success: true, message: `echoed ${text}`, value: { text } })),
    );
    const again = await post(app, { name: 'sl_echo', arguments: { text: 'e' } });
    expect(again.body).toMatchObject({ success: true, value: { text: 'e' } });
  });

  it("answers the server's JSON-RPC error as a failed call", async () => {
    const { body } = await post(app, { name: 'sl_refuse', arguments: {} });
    expect(body.success).toBe(false);
    expect(JSON.stringify(body.error)).toContain('refused by the server');
  });

  it("refuses a result that breaks the tool's output schema", async () => {
    const { body } = await post(app, { name: 'sl_typed', arguments: {} });
    expect(body.success).toBe(false);
    expect(JSON.stringify(body.error)).toMatch(/output schema/i);
  });
});
