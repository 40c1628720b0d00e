/**
 * The typed client (`toolport/client`) against the real app on a port: tools, one call, a turn,
 * tasks, cut results, typed 4xx errors, and retries that never double an effect — a proxy in front
 * of the service drops the connection after the service has run the call, or answers 503 once.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NotFoundError, ToolportClient, ToolportUnavailableError, UnauthorizedError, type InvocationResult } from '../../src/client/index.ts';
import { makeApp } from '../helpers/app.ts';
import { bearer, testKeys, type TestKeys } from '../helpers/keys.ts';
import { ledgerTools, runsOf } from '../helpers/ledger-tools.ts';

let app: FastifyInstance;
let base: string;
let keys: TestKeys;

/** What the proxy does with the next POST: pass it, drop the connection once the service answered, or answer 503 itself. */
let nextPost: ('drop-after' | '503')[] = [];
const seenKeys: (string | undefined)[] = [];
let proxy: Server;
let proxied: string;

beforeAll(async () => {
  keys = await testKeys(['*']);
  app = await makeApp('memory', {
    env: { API_KEYS_FILE: keys.file, MAX_CONTENT_CHARS: '300' },
    register: (registry) => ledgerTools.forEach((tool) => registry.registerTool(tool)),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const trick = req.method === 'POST' ? nextPost.shift() : undefined;
      if (req.method === 'POST') seenKeys.push(req.headers['idempotency-key'] as string | undefined);
      if (trick === '503') {
        res
          .writeHead(503, { 'content-type': 'application/problem+json' })
          .end(JSON.stringify({ status: 503, title: 'Service Unavailable', detail: 'try again' }));
        return;
      }
      const upstream = httpRequest(`${base}${req.url}`, { method: req.method, headers: req.headers as IncomingHttpHeaders }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => {
          if (trick === 'drop-after') return req.socket.destroy(); // the effect happened; the client never hears of it
          res.writeHead(answer.statusCode ?? 502, answer.headers).end(Buffer.concat(body));
        });
      });
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxied = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  proxy?.close();
  await app?.close();
});

const client = (options: { apiKey?: string; baseUrl?: string; retries?: number } = {}) =>
  new ToolportClient({
    baseUrl: options.baseUrl ?? base,
    apiKey: options.apiKey ?? keys.admin,
    ...(options.retries !== undefined && { retries: options.retries }),
  });

describe('the typed client', () => {
  it('lists the tools in a provider format', async () => {
    const openai = await client().listTools({ format: 'openai' });
    expect(openai.tools.map((t) => (t as { function: { name: string } }).function.name)).toContain('echo');
    const native = await client().listTools();
    expect(native.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('invokes one call: a success and a tool-level failure are both results', async () => {
    const echoed = await client().invoke('echo', { text: 'hi' });
    expect(echoed).toMatchObject({ name: 'echo', success: true, value: { text: 'hi' } });
    const failed = await client().invoke('fails');
    expect(failed).toMatchObject({ success: false, message: 'Nothing found: try another query.' });
  });

  it('invokes a whole turn in its format and answers the messages to append', async () => {
    const turn = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Let me check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'echo', input: { text: 'a' } },
        { type: 'tool_use', id: 'toolu_2', name: 'echo', input: { text: 'b' } },
      ],
    };
    const answer = await client().invokeTurn(turn, { format: 'anthropic' });
    expect(answer.results.map((r) => r.success)).toEqual([true, true]);
    expect(answer.messages).toHaveLength(1);
    expect(answer.messages[0]).toMatchObject({ role: 'user', content: [{ tool_use_id: 'toolu_1' }, { tool_use_id: 'toolu_2' }] });
  });

  it('starts a task and waits for its result', async () => {
    const task = await client().startTask('slow', { ms: 50 });
    expect(task.status).toBe('working');
    const done = await client().waitTask(task.task_id, { timeoutMs: 10_000 });
    expect(done.status).toBe('completed');
    expect((done.result as InvocationResult).success).toBe(true);
  });

  it('reads the whole of a cut result by its result_ref', async () => {
    const cut = await client().invoke('big', { size: 1000 });
    expect(cut.result_ref).toBeDefined();
    const whole = await client().readResult(cut.result_ref!.uri);
    expect(JSON.stringify(whole).length).toBeGreaterThan(300);
  });

  it('throws typed errors for refused requests', async () => {
    await expect(client({ apiKey: 'sk-nobody' }).invoke('echo', { text: 'x' })).rejects.toBeInstanceOf(UnauthorizedError);
    const missing = await client()
      .waitTask('0190a0f0-0000-7000-8000-000000000000', { timeoutMs: 10 })
      .catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect((missing as NotFoundError).status).toBe(404);
  });

  it('retries a POST whose connection broke after the service ran it, with the same Idempotency-Key: one effect, the result replayed', async () => {
    const tag = `client-drop-${Date.now()}`;
    seenKeys.length = 0;
    nextPost = ['drop-after'];
    const result = await client({ baseUrl: proxied }).invoke('charge_global', { tag });
    expect(result.success).toBe(true);
    expect(result.replayed).toBe(true);
    expect(runsOf(tag)).toBe(1);
    expect(seenKeys).toHaveLength(2);
    expect(seenKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(seenKeys[1]).toBe(seenKeys[0]);
  });

  it('retries a 503 with the same Idempotency-Key, and gives up with ToolportUnavailableError', async () => {
    seenKeys.length = 0;
    nextPost = ['503'];
    expect((await client({ baseUrl: proxied }).invoke('echo', { text: 'again' })).success).toBe(true);
    expect(seenKeys[1]).toBe(seenKeys[0]);

    nextPost = ['503', '503'];
    const failed = await client({ baseUrl: proxied, retries: 1 })
      .invoke('echo', { text: 'never' })
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ToolportUnavailableError);
    expect((failed as ToolportUnavailableError).status).toBe(503);
    const unreachable = await client({ baseUrl: 'http://127.0.0.1:9', retries: 0 })
      .listTools()
      .catch((err: unknown) => err);
    expect(unreachable).toBeInstanceOf(ToolportUnavailableError);
    expect((unreachable as ToolportUnavailableError).status).toBeNull();
  });

  it('sends the session and the API key', async () => {
    const session = `client-${Date.now()}`;
    expect((await client().invoke('planning_setup_plan', { objective: 'ship it' }, { sessionId: session })).success).toBe(true);
    const events = await app.inject({ method: 'GET', url: `/sessions/${session}/events`, headers: bearer(keys.admin) });
    expect(events.json().events.map((e: { tool: string }) => e.tool)).toEqual(['planning_setup_plan']);
  });
});
