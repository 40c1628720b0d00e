/**
 * An MCP server reached over Streamable HTTP (SPEC §10): server-everything in its HTTP mode,
 * started by the test. Its tools are listed and called like any; progress is relayed; a server
 * that goes away answers upstream_unavailable, is named by /readyz, and is reached again once it
 * is back (toolport reconnects with backoff).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, stopAll, type Child } from '../../support/children.ts';
import { get, post } from '../helpers/app.ts';
import { eventually, EVERYTHING, makeMcpApp, startEverythingHttp } from '../helpers/mcp-upstreams.ts';

describe('an MCP server over Streamable HTTP', () => {
  let app: FastifyInstance;
  let url: string;
  let server: Child;
  beforeAll(async () => {
    ({ url, child: server } = await startEverythingHttp());
    app = await makeMcpApp('memory', [{ source: 'remote', url, headers: { 'X-Test-Token': 'not-a-secret' }, timeout_ms: 10_000 }]);
  });
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  it('lists and calls its tools: structured and text results', async () => {
    const { body } = await get(app, '/tools?format=openai');
    expect(body.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(['remote_echo', 'remote_get-structured-content', 'remote_get-sum']));
    const structured = await post(app, { name: 'remote_get-structured-content', arguments: { location: 'Los Angeles' } });
    expect(structured.body).toMatchObject({ success: true, value: { temperature: 73, conditions: 'Sunny / Clear', humidity: 48 } });
    const text = await post(app, { name: 'remote_get-sum', arguments: { a: 20, b: 22 } });
    expect(text.body).toMatchObject({ success: true, message: 'The sum of 20 and 22 is 42.', value: null });
  });

  it('relays progress of a long tool to an MCP client of toolport (SSE)', async () => {
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const response = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'remote_trigger-long-running-operation', arguments: { duration: 1, steps: 3 }, _meta: { progressToken: 'p9' } } }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const messages = (await response.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const progress = messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params);
    expect(progress.at(-1)).toEqual({ progressToken: 'p9', progress: 3, total: 3 });
    expect(messages.at(-1)).toMatchObject({ id: 9, result: { isError: false } });
  });

  it('answers upstream_unavailable while the server is gone, and serves again once it is back', async () => {
    const port = new URL(url).port;
    server.proc.kill('SIGKILL');
    await new Promise((resolve) => server.proc.once('exit', resolve));
    const gone = await post(app, { name: 'remote_echo', arguments: { message: 'anyone?' } });
    expect(gone.body).toMatchObject({ success: false, error: { code: 'upstream_unavailable' } });
    expect((await get(app, '/readyz')).body.upstreams_down).toEqual([{ source: 'remote', reason: expect.any(String) }]);
    server = startChild('server-everything (again)', process.execPath, [EVERYTHING, 'streamableHttp'], { cwd: process.cwd(), env: { ...process.env, PORT: port } });
    await eventually('the tools answer again', async () => (await post(app, { name: 'remote_echo', arguments: { message: 'back' } })).body.success === true, 20_000);
    expect((await get(app, '/readyz')).body.upstreams_down).toBeUndefined();
  });
});
