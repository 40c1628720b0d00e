/**
 * MCP servers reached over Streamable HTTP: server-everything in its HTTP mode, and a server of the
 * official SDK (its stateful Streamable HTTP server transport), started by the test. Their tools are
 * listed and called like any; progress is relayed; a deadline or a cancel reaches the server; the
 * server's list_changed arrives on its GET stream; a server that goes away answers
 * upstream_unavailable, is named by /readyz, and is reached again once it is back (toolport
 * reconnects with backoff).
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChild, stopAll, type Child } from '../../support/children.ts';
import { get, post } from '../helpers/app.ts';
import { eventually, EVERYTHING, makeMcpApp, startChangingHttp, startEverythingHttp } from '../helpers/mcp-upstreams.ts';

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
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'remote_trigger-long-running-operation', arguments: { duration: 1, steps: 3 }, _meta: { progressToken: 'p9' } },
      }),
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const messages = (await response.text())
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
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
    server = startChild('server-everything (again)', process.execPath, [EVERYTHING, 'streamableHttp'], {
      cwd: process.cwd(),
      env: { ...process.env, PORT: port },
    });
    await eventually(
      'the tools answer again',
      async () => (await post(app, { name: 'remote_echo', arguments: { message: 'back' } })).body.success === true,
      20_000,
    );
    expect((await get(app, '/readyz')).body.upstreams_down).toBeUndefined();
  });
});

describe("the official SDK's server over Streamable HTTP", () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    const { url } = await startChangingHttp();
    app = await makeMcpApp('memory', [{ source: 'sdk', url }]);
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app?.close();
    await stopAll();
  });

  const cancelled = async () => ((await post(app, { name: 'sdk_cancellations', arguments: {} })).body.value.cancelled as { tag: string }[]).map((c) => c.tag);

  it('calls its tools: text, structured content and a tool error as over stdio', async () => {
    expect((await post(app, { name: 'sdk_greet', arguments: { name: 'Ada' } })).body).toMatchObject({ success: true, message: 'Hello, Ada.' });
    expect((await post(app, { name: 'sdk_greetings', arguments: {} })).body).toMatchObject({ success: true, value: { count: expect.any(Number) } });
    const refused = await post(app, { name: 'sdk_refuse', arguments: {} });
    expect(refused.body).toMatchObject({ success: false, error: { code: 'handler_error', detail: 'the fixture refuses: quota exhausted' } });
  });

  it('answers many calls at once, each with its own answer', async () => {
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post(app, { name: 'sdk_count', arguments: { tag: `many-${i}` } })));
    expect(answers.map((a) => a.body.value)).toEqual(Array.from({ length: 20 }, (_, i) => ({ tag: `many-${i}`, runs: 1 })));
  });

  it('relays progress, the last report included', async () => {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ id: 'steps', name: 'sdk_steps', arguments: { count: 4 } }),
    });
    const events = (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => ({ event: /^event: (.*)$/m.exec(block)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(block)![1]!) }));
    // Reports closer together than the relay's interval are merged; the first and the last always go out.
    const done = events.filter((e) => e.event === 'progress').map((e) => e.data.done as number);
    expect(done[0]).toBe(1);
    expect(done.at(-1)).toBe(4);
    expect(done).toEqual(done.toSorted((a, b) => a - b));
    expect(events.at(-1)).toMatchObject({ event: 'result', data: { success: true, message: '4 steps done' } });
  });

  it('tells the server to stop a call out of time, and forwards an MCP cancel', async () => {
    const started = Date.now();
    const late = await post(app, { name: 'sdk_sleep', arguments: { ms: 10_000, tag: 'http-deadline' } }, { 'x-timeout-ms': '300' });
    expect(late.body.error.code).toBe('deadline_exceeded');
    expect(Date.now() - started).toBeLessThan(3000);
    await eventually('the server saw the deadline', async () => (await cancelled()).includes('http-deadline'));

    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const call = { jsonrpc: '2.0', id: 'http-1', method: 'tools/call', params: { name: 'sdk_sleep', arguments: { ms: 10_000, tag: 'http-cancel' } } };
    const running = fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(call) });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'http-1', reason: 'stop' } };
    expect((await fetch(`${base}/mcp`, { method: 'POST', headers, body: JSON.stringify(cancel) })).status).toBe(202);
    expect(((await (await running).json()) as { result: { isError: boolean } }).result.isError).toBe(true);
    await eventually('the server saw the cancel', async () => (await cancelled()).includes('http-cancel'));
  });

  it("updates the catalog when the server's list changes (notified on its GET stream)", async () => {
    await post(app, { name: 'sdk_change_greet', arguments: {} });
    await eventually('greet changed', async () => {
      const tool = (await get(app, '/tools')).body.tools.find((t: any) => t.name === 'sdk_greet');
      return tool?.description === 'Greets someone by name, formally if asked.';
    });
    expect((await post(app, { name: 'sdk_greet', arguments: { name: 'Ada', formal: true } })).body).toMatchObject({ success: true, message: 'Good day, Ada.' });
  });
});
