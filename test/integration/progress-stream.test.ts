/**
 * Progress reaches callers as Server-Sent Events: MCP clients that sent a progressToken, and
 * POST /tools/invoke callers that accept text/event-stream. Also MCP's notifications/cancelled.
 */
import type { FastifyInstance } from 'fastify';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';
import { until } from '../helpers/tasks.ts';
import { aborted, started } from '../helpers/tools.ts';

interface SseEvent {
  event: string;
  data: any;
}

function parseEvents(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

describe('progress as server-sent events', () => {
  let app: FastifyInstance;
  let base: string;
  beforeAll(async () => {
    app = await makeApp('memory');
    base = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(() => app.close());

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(base + path, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  const stepsCall = (meta: Record<string, unknown> | null) => ({
    jsonrpc: '2.0',
    id: 41,
    method: 'tools/call',
    params: { name: 'steps', arguments: { n: 3, ms: 150 }, ...(meta && { _meta: meta }) },
  });

  it('MCP: streams notifications/progress for the progressToken, then the response', async () => {
    const response = await post('/mcp', stepsCall({ progressToken: 'tok-1' }), { accept: 'application/json, text/event-stream' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = parseEvents(await response.text());
    const progress = events.slice(0, -1).map((e) => e.data);
    expect(progress.length).toBeGreaterThanOrEqual(2);
    for (const notification of progress) {
      expect(notification).toMatchObject({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', total: 3 } });
    }
    expect(progress.at(-1).params.progress).toBe(3);
    expect(events.at(-1)).toEqual({
      event: 'message',
      data: { jsonrpc: '2.0', id: 41, result: expect.objectContaining({ structuredContent: { steps: 3 }, isError: false }) },
    });
  });

  it('MCP: answers plain JSON without a progressToken, or to a client that does not accept SSE', async () => {
    for (const [body, accept] of [
      [stepsCall(null), 'application/json, text/event-stream'],
      [stepsCall({ progressToken: 7 }), 'application/json'],
    ] as const) {
      const response = await post('/mcp', body, { accept });
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toMatchObject({ id: 41, result: { structuredContent: { steps: 3 } } });
    }
  });

  it('POST /tools/invoke: `progress` events per call, then one `result` event with the usual answer', async () => {
    const response = await post(
      '/tools/invoke',
      {
        calls: [
          { id: 'a', name: 'steps', arguments: { n: 2, ms: 150 } },
          { id: 'b', name: 'echo', arguments: { text: 'hi' } },
        ],
      },
      { accept: 'text/event-stream' },
    );
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('x-request-id')).toBeTruthy();
    const events = parseEvents(await response.text());
    expect(events.slice(0, -1)).toEqual([
      { event: 'progress', data: { call_id: 'a', done: 1, total: 2 } },
      { event: 'progress', data: { call_id: 'a', done: 2, total: 2 } },
    ]);
    const result = events.at(-1)!;
    expect(result.event).toBe('result');
    expect(result.data.results.map((r: { id: string; success: boolean }) => [r.id, r.success])).toEqual([
      ['a', true],
      ['b', true],
    ]);
    expect(result.data.results[0].value).toEqual({ steps: 2 });
    expect(result.data.messages).toHaveLength(2);
  });

  it('POST /tools/{name}/invoke streams too; a call without progress is one `result` event', async () => {
    const response = await post('/tools/echo/invoke', { text: 'plain' }, { accept: 'text/event-stream' });
    const events = parseEvents(await response.text());
    expect(events).toEqual([{ event: 'result', data: expect.objectContaining({ name: 'echo', success: true, value: { text: 'plain' } }) }]);
  });

  it('a request-level error before any event is still a problem+json answer', async () => {
    const response = await fetch(`${base}/tools/invoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: '{"nope":1}',
    });
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('MCP notifications/cancelled aborts the running call of that request id in the same session', async () => {
    const headers = { accept: 'application/json, text/event-stream', 'x-session-id': 'cancel-mcp' };
    const starts = started.size;
    const running = post('/mcp', { jsonrpc: '2.0', id: 'slow-1', method: 'tools/call', params: { name: 'watch_abort', arguments: {} } }, headers);
    await until('the handler starts', () => started.size > starts);
    const sent = Date.now();
    const cancel = await post(
      '/mcp',
      { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1', reason: 'user pressed stop' } },
      headers,
    );
    expect(cancel.status).toBe(202);
    const answer = (await (await running).json()) as { result: { isError: boolean; content: { text: string }[] } };
    expect(Date.now() - sent).toBeLessThan(1000);
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]!.text).toMatch(/cancel/i);
    expect([...aborted.values()].some((at) => at >= sent)).toBe(true);
  });

  it('a cancellation for another session or another id leaves the call running', async () => {
    const headers = { accept: 'application/json', 'x-session-id': 'cancel-keep' };
    const running = post('/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: 300 } } }, headers);
    await sleep(100);
    await post('/mcp', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, { 'x-session-id': 'other' });
    await post('/mcp', { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 2 } }, headers);
    const answer = (await (await running).json()) as { result: { isError: boolean } };
    expect(answer.result.isError).toBe(false);
  });
});
