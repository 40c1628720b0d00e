/**
 * Property-based hostile input (fast-check, seeded so a failure replays): whatever the body, the
 * headers or the arguments, the answer is a 2xx result or a 4xx problem — never a 5xx, never a hang.
 */
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const SEED = 20261123;
const FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'];
const TOOLS = ['echo', 'planning_setup_plan', 'planning_add_step', 'planning_update_step', 'planning_read_plan', 'introspect_session', 'counter', 'nope'];

let app: FastifyInstance;
beforeAll(async () => {
  app = await makeApp('memory', { env: { MAX_BODY_BYTES: '65536', DEFAULT_TIMEOUT_MS: '2000' } });
});
afterAll(() => app.close());

interface Answer {
  status: number;
  type: string;
  body: string;
}

async function send(url: string, payload: string | Buffer, headers: Record<string, string>): Promise<Answer> {
  const response = await app.inject({ method: 'POST', url, payload, headers });
  return { status: response.statusCode, type: String(response.headers['content-type'] ?? ''), body: response.body };
}

/** The contract for any answer: a JSON result, or a problem+json 4xx; a 5xx only as a problem (503 store). */
function expectWellFormed(answer: Answer): void {
  expect(answer.status, answer.body.slice(0, 300)).toBeLessThan(500);
  if (answer.status === 200) {
    expect(answer.type).toMatch(/^application\/json/);
    const body = JSON.parse(answer.body) as Record<string, unknown>;
    expect('results' in body || typeof body.success === 'boolean').toBe(true);
  } else {
    expect(answer.type).toMatch(/^application\/problem\+json/);
    const problem = JSON.parse(answer.body) as Record<string, unknown>;
    expect(problem.status).toBe(answer.status);
    expect(typeof problem.detail).toBe('string');
  }
}

/** JSON values with the keys that poison prototypes and the numbers that lose precision mixed in. */
const hostileKey = fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', '', 'name', 'arguments', 'id'));
const hostileJson = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.string({ maxLength: 40 }), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(2 ** 60), fc.constant(-(2 ** 53) - 2)),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 6 }),
  ),
})).value;

/** A body in the shape of a format's call, with hostile parts. */
const callShaped = fc.oneof(
  fc.record(
    { name: fc.constantFrom(...TOOLS), arguments: fc.oneof(hostileJson, fc.string({ maxLength: 60 })), id: fc.option(fc.string(), { nil: undefined }) },
    { requiredKeys: ['name'] },
  ),
  fc.record({
    id: fc.string(),
    type: fc.constant('function'),
    function: fc.record({ name: fc.constantFrom(...TOOLS), arguments: fc.oneof(fc.string(), hostileJson) }),
  }),
  fc.record({ type: fc.constant('function_call'), call_id: fc.string(), name: fc.constantFrom(...TOOLS), arguments: fc.oneof(fc.string(), hostileJson) }),
  fc.record({ type: fc.constant('tool_use'), id: fc.string(), name: fc.constantFrom(...TOOLS), input: hostileJson }),
  fc.record({ functionCall: fc.record({ name: fc.constantFrom(...TOOLS), args: hostileJson }) }),
  fc.record({
    role: fc.constantFrom('assistant', 'model'),
    tool_calls: fc.array(hostileJson, { maxLength: 4 }),
    content: fc.array(hostileJson, { maxLength: 4 }),
    parts: fc.array(hostileJson, { maxLength: 4 }),
  }),
  fc.record({ calls: fc.array(hostileJson, { maxLength: 4 }) }),
  fc.record({ output: fc.array(hostileJson, { maxLength: 4 }) }),
);

const headerValue = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/),
  fc.constantFrom('', '0', '-1', '1e3', '99999999999', 'abc\r\nx: y'),
);
const headers = fc.record(
  { 'x-session-id': headerValue, 'x-timeout-ms': headerValue, 'idempotency-key': headerValue, 'x-request-id': headerValue },
  { requiredKeys: [] },
);

/** Header values Node's HTTP layer itself refuses (CR/LF, non-Latin-1) never reach the app; drop them. */
function sendable(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).filter(([, v]) => /^[\t\x20-\x7e\x80-\xff]*$/.test(v)));
}

describe('hostile input, property-based', () => {
  it('answers any JSON body on POST /tools/invoke, in any ?format=, with a result or a 4xx problem', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(callShaped, hostileJson),
        fc.option(fc.constantFrom(...FORMATS, 'bogus'), { nil: undefined }),
        headers,
        async (body, format, h) => {
          const url = format === undefined ? '/tools/invoke' : `/tools/invoke?format=${format}`;
          expectWellFormed(await send(url, JSON.stringify(body), { 'content-type': 'application/json', ...sendable(h) }));
        },
      ),
      { seed: SEED, numRuns: 2500 },
    );
  });

  it('answers any bytes, any text and any content type with a 4xx problem or a result', async () => {
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/json; charset=latin1',
      'multipart/form-data',
    );
    const payload = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ maxLength: 200 }),
      fc.string({ unit: 'binary', maxLength: 100 }),
    );
    await fc.assert(
      fc.asyncProperty(payload, contentType, async (body, type) => {
        expectWellFormed(await send('/tools/invoke', body, { 'content-type': type }));
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it('answers any arguments to every tool on POST /tools/{name}/invoke', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...TOOLS), hostileJson, headers, async (tool, body, h) => {
        expectWellFormed(await send(`/tools/${tool}/invoke`, JSON.stringify(body), { 'content-type': 'application/json', ...sendable(h) }));
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it('answers any JSON-RPC-shaped body on POST /mcp with a JSON-RPC answer, a 202, or a 4xx', async () => {
    const method = fc.constantFrom(
      'initialize',
      'tools/list',
      'tools/call',
      'ping',
      'server/discover',
      'notifications/cancelled',
      'notifications/initialized',
      'nope',
    );
    const message = fc.record(
      {
        jsonrpc: fc.oneof(fc.constant('2.0'), hostileJson),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.constant(null), hostileJson),
        method: fc.oneof(method, hostileJson),
        params: fc.oneof(hostileJson, fc.record({ name: fc.constantFrom(...TOOLS), arguments: hostileJson, _meta: hostileJson }, { requiredKeys: [] })),
      },
      { requiredKeys: [] },
    );
    const mcpHeaders = fc.record(
      {
        'mcp-protocol-version': fc.constantFrom('2025-11-25', '2026-07-28', '2024-11-05', 'bogus'),
        'mcp-method': fc.oneof(method, fc.string({ maxLength: 12 })),
        'mcp-session-id': headerValue,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(message, fc.array(message, { maxLength: 3 }), hostileJson), mcpHeaders, async (body, h) => {
        const response = await app.inject({
          method: 'POST',
          url: '/mcp',
          payload: JSON.stringify(body),
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...sendable(h) },
        });
        expect(response.statusCode, response.body.slice(0, 300)).toBeLessThan(500);
        if (response.statusCode === 202) return;
        const type = String(response.headers['content-type']);
        if (type.startsWith('application/problem+json')) return expect(response.statusCode).toBeGreaterThanOrEqual(400);
        expect(type).toMatch(/^(application\/json|text\/event-stream)/);
        if (type.startsWith('application/json')) {
          const answer = JSON.parse(response.body) as Record<string, unknown> | Record<string, unknown>[];
          for (const one of Array.isArray(answer) ? answer : [answer]) {
            expect(one.jsonrpc).toBe('2.0');
            expect('result' in one || 'error' in one).toBe(true);
          }
        }
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('answers any path parameter and query on the read and admin routes with JSON or a 4xx problem', async () => {
    const segment = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('..', '%2e%2e', '%00', 'echo', 'global%3Aecho%3Ax', 'a'.repeat(300), 'b'.repeat(3000)),
    );
    const query = fc.oneof(
      fc.constant(''),
      fc.string({ maxLength: 30 }).map((q) => `?${q}`),
      fc.constantFrom('?format=openai&tool_choice=echo', '?after=-1', '?limit=0', '?scope=global', '?strategy=x', '?format=gemini&tool_choice=required'),
    );
    type Route = readonly ['GET' | 'DELETE', (p: string) => string];
    const routes: Route[] = [
      ['GET', (p: string) => `/tools/${p}`],
      ['GET', (p: string) => `/tools/${p}/versions`],
      ['GET', (p: string) => `/tools/hashes/${p}`],
      ['GET', (p: string) => `/sessions/${p}/plan`],
      ['GET', (p: string) => `/sessions/${p}/events`],
      ['DELETE', (p: string) => `/sessions/${p}`],
      ['GET', (p: string) => `/ledger/effects/${p}`],
      ['DELETE', (p: string) => `/ledger/effects/${p}`],
      ['DELETE', (p: string) => `/ledger/tools/${p}`],
      ['DELETE', () => '/ledger'],
      ['GET', () => '/tools'],
      ['GET', () => '/planning/instructions'],
    ];
    const route = fc.constantFrom(...routes);
    await fc.assert(
      fc.asyncProperty(route, segment, query, async ([method, path], param, q) => {
        const url = path(encodeURIComponent(param)) + q.replace(/#/g, '');
        const response = await app.inject({ method, url });
        expect(response.statusCode, `${method} ${url}: ${response.body.slice(0, 200)}`).toBeLessThan(500);
        if (response.statusCode >= 400) expect(String(response.headers['content-type'])).toMatch(/^application\/problem\+json/);
      }),
      { seed: SEED, numRuns: 1500 },
    );
  });

  it('leaves Object.prototype untouched after all of it', () => {
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
