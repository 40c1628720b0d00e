/**
 * The Streamable HTTP client transport on undici, against a raw node:http server that answers the
 * way real servers may: an SSE stream cut at awkward places, a redirect, a stream that drops after
 * an event id and before its answer (resumed with Last-Event-ID), a GET stream open at close.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UndiciStreamableHttpTransport } from '../../src/sources/mcp/http-transport.ts';

type Handler = (request: http.IncomingMessage, body: string, response: http.ServerResponse) => void;

let handler: Handler = () => {};
const seen: { method: string; headers: http.IncomingHttpHeaders }[] = [];
const server = http.createServer((request, response) => {
  let body = '';
  request.setEncoding('utf8');
  request.on('data', (chunk: string) => (body += chunk));
  request.on('end', () => {
    seen.push({ method: request.method!, headers: request.headers });
    handler(request, body, response);
  });
});
const agent = new Agent();
let url: URL;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
});
afterEach(() => {
  seen.length = 0;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await agent.close();
});

/** A started transport whose messages and errors are collected. */
async function transport(headers: Record<string, string> = {}) {
  const made = new UndiciStreamableHttpTransport(url, agent, headers);
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  made.onmessage = (message) => messages.push(message);
  made.onerror = (error) => errors.push(error);
  await made.start();
  return { transport: made, messages, errors };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
};

const request = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'x' } } as const;

describe('the Streamable HTTP client transport on undici', () => {
  it('reads an SSE answer cut anywhere, even inside a character, and keeps the session and headers', async () => {
    const text = 'grüße ✓ — ünïcode';
    const events =
      `: comment\n\nevent: message\nid: 1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } })}\n\n` +
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { text } })}\n\n`;
    const bytes = Buffer.from(events, 'utf8');
    handler = (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'mcp-session-id': 'session-1' });
      // One byte at a time around the multi-byte characters, then the rest.
      const cut = bytes.indexOf(Buffer.from('ü'));
      response.write(bytes.subarray(0, cut + 1));
      setTimeout(() => response.end(bytes.subarray(cut + 1)), 20);
    };
    const { transport: made, messages, errors } = await transport({ 'x-token': 'abc' });
    made.setProtocolVersion('2025-11-25');
    await made.send(request);
    await until(() => messages.length === 2);
    expect(messages[1]).toEqual({ jsonrpc: '2.0', id: 7, result: { text } });
    expect(made.sessionId).toBe('session-1');
    expect(seen[0]!.headers).toMatchObject({
      'x-token': 'abc',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      'mcp-protocol-version': '2025-11-25',
    });
    await made.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 7 } });
    expect(seen[1]!.headers['mcp-session-id']).toBe('session-1');
    expect(errors).toEqual([]);
    await made.close();
  });

  it('reads a JSON answer, and fails on a redirect or an error status without following it', async () => {
    handler = (_request, _body, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: 7, result: {} }));
    const { transport: made, messages, errors } = await transport();
    await made.send(request);
    expect(messages).toEqual([{ jsonrpc: '2.0', id: 7, result: {} }]);

    handler = (_request, _body, response) => response.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end();
    await expect(made.send(request)).rejects.toThrow(/redirected \(HTTP 307\), not followed/);
    handler = (_request, _body, response) => response.writeHead(404).end('no such session');
    await expect(made.send(request)).rejects.toMatchObject({ code: 404, message: expect.stringContaining('no such session') });
    expect(errors).toHaveLength(2);
    expect(seen.filter((s) => s.method === 'POST')).toHaveLength(3);
    await made.close();
  });

  it('resumes a POST stream that broke after an event id with a GET and Last-Event-ID', async () => {
    handler = (request, _body, response) => {
      if (request.method === 'POST') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('id: ev-1\nretry: 10\ndata: \n\n');
        setTimeout(() => response.destroy(), 20); // dropped before the answer
      } else {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.end(`id: ev-2\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 'server-side', result: { resumed: true } })}\n\n`);
      }
    };
    const { transport: made, messages } = await transport();
    await made.send(request);
    await until(() => messages.length === 1);
    expect(messages[0]).toEqual({ jsonrpc: '2.0', id: 7, result: { resumed: true } }); // answered under the request's own id
    expect(seen.find((s) => s.method === 'GET')!.headers['last-event-id']).toBe('ev-1');
    await made.close();
  });

  it('opens the GET stream after initialized, takes its messages, and ends it on close', async () => {
    let getClosed = false;
    handler = (request, _body, response) => {
      if (request.method === 'POST') {
        response.writeHead(202).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write(`data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`);
      response.on('close', () => (getClosed = true));
    };
    const { transport: made, messages } = await transport();
    let closed = 0;
    made.onclose = () => closed++;
    await made.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await until(() => messages.length === 1);
    expect(messages[0]).toMatchObject({ method: 'notifications/tools/list_changed' });
    await made.close();
    await until(() => getClosed);
    expect(closed).toBe(1);
  });
});
