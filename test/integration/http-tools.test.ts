/**
 * HTTP tools (docs/tool-sources.md): TOOLS_FILE `http:` entries forwarded to a Python tool server and to a Node
 * server that misbehaves, through the real app: answers mapped, failures coded, headers sent.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';
import { faultHandler, slowRequests, startNodeServer, startPythonToolServer, type NodeServer, type PythonToolServer } from '../helpers/upstreams.ts';

let python: PythonToolServer;
let faults: NodeServer;
let folder: string;
let toolsFile: string;
let app: FastifyInstance;

const TOKEN_VARIABLE = 'TOOLPORT_TEST_WEATHER_TOKEN';
const TOKEN = `secret-${randomUUID()}`;

function tool(name: string, url: string, extra = ''): string {
  return `  - name: ${name}
    description: ${name} over HTTP.
    parameters: {type: object, properties: {city: {type: string}, name: {type: string}, note: {type: string}}}
    endpoint: {url: "${url}", headers: {Authorization: "Bearer \${${TOKEN_VARIABLE}}"}}
${extra}`;
}

beforeAll(async () => {
  process.env[TOKEN_VARIABLE] = TOKEN;
  [python, faults] = await Promise.all([startPythonToolServer(), startNodeServer(faultHandler)]);
  folder = await mkdtemp(join(tmpdir(), 'toolport-http-tools-'));
  toolsFile = join(folder, 'tools.yaml');
  await writeFile(
    toolsFile,
    [
      'http:',
      tool('weather_now', `${python.url}/weather`, '    timeout_ms: 5000\n'),
      tool('greet', `${python.url}/greet`),
      tool('fortune', `${python.url}/fortune`),
      tool('refuse', `${python.url}/refuse`),
      tool('crash', `${python.url}/crash`),
      tool('notes_add', `${python.url}/notes`),
      tool('upstream_slow', `${faults.url}/slow`),
      tool('reset', `${faults.url}/reset`),
      tool('invalid_json', `${faults.url}/invalid-json`),
      tool('huge', `${faults.url}/huge`),
      tool('redirect', `${faults.url}/redirect`),
      tool('nowhere', 'http://127.0.0.1:9/closed'),
    ].join('\n'),
  );
  app = await makeApp('memory', { env: { TOOLS_FILE: toolsFile } });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([python?.stop(), faults?.stop(), rm(folder, { recursive: true, force: true })]);
  delete process.env[TOKEN_VARIABLE];
});

const call = (name: string, args: Record<string, unknown> = {}, headers: Record<string, string> = {}) => post(app, { name, arguments: args }, headers);

describe('HTTP tools: answers', () => {
  it('takes a 2xx JSON answer as the value, and sends the request id, remaining budget and configured headers', async () => {
    const { status, body } = await call('weather_now', { city: 'Lyon' }, { 'x-request-id': 'req-weather-1', 'x-timeout-ms': '3000' });
    expect(status).toBe(200);
    expect(body.success).toBe(true);
    expect(body.error).toBeNull();
    expect(body.message).toBe('Done (HTTP 200).');
    expect(body.value).toMatchObject({ city: 'Lyon', celsius: 21.5 });
    const seen = body.value.seen as Record<string, string>;
    expect(seen['x-request-id']).toBe('req-weather-1');
    expect(Number(seen['x-timeout-ms'])).toBeGreaterThan(2000);
    expect(Number(seen['x-timeout-ms'])).toBeLessThanOrEqual(3000);
    // The upstream got the token; its echo of it reaches the caller redacted (docs/operations.md#secrets-never-reach-the-model).
    expect(seen.authorization).toBe(`Bearer [redacted:${TOKEN_VARIABLE}]`);
    expect(JSON.stringify(body)).not.toContain(TOKEN);
    expect(seen['x-session-id']).toBeUndefined();
    expect(seen['idempotency-key']).toBeUndefined();
  });

  it('takes a ToolResult-shaped answer as the result itself', async () => {
    const { body } = await call('greet', { name: 'Ada' });
    expect(body.success).toBe(true);
    expect(body.message).toBe('Hello, Ada!');
    expect(body.value.greeted).toBe('Ada');
    expect(body.content).toContain('Hello, Ada!');
  });

  it('takes a text answer as a string value', async () => {
    const { body } = await call('fortune');
    expect(body.success).toBe(true);
    expect(body.value).toBe('You will write a tool server in Python.');
  });

  it('answers upstream_rejected with the problem detail of a 4xx', async () => {
    const { status, body } = await call('refuse', { city: 'Atlantis' });
    expect(status).toBe(200);
    expect(body.success).toBe(false);
    expect(body.error.code).toBe('upstream_rejected');
    expect(body.message).toContain("city 'Atlantis' is not a city we know");
    expect(body.message).toContain('HTTP 422');
  });

  it('answers upstream_unavailable for a 500, without the upstream body', async () => {
    const { body } = await call('crash');
    expect(body.error.code).toBe('upstream_unavailable');
    expect(body.message).toContain('HTTP 500');
    expect(body.message).not.toContain('secret internals');
  });

  it('refuses invalid arguments without calling the endpoint', async () => {
    const { body } = await call('weather_now', { city: 7 });
    expect(body.error.code).toBe('invalid_arguments');
  });

  it('lists the tools in discovery without their endpoints or secrets', async () => {
    const { body, text } = await get(app, '/tools?format=openai');
    expect(body.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(['weather_now', 'greet', 'notes_add']));
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(python.url);
  });
});

describe('HTTP tools: faults', () => {
  it('answers deadline_exceeded at the deadline and aborts the upstream request', async () => {
    const before = slowRequests.abandoned;
    const started = Date.now();
    const { body } = await call('upstream_slow', {}, { 'x-timeout-ms': '300' });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(body.error.code).toBe('deadline_exceeded');
    await expect.poll(() => slowRequests.abandoned, { timeout: 3000 }).toBe(before + 1);
  });

  it('answers upstream_unavailable for a reset connection, invalid JSON, a refused connection and a redirect', async () => {
    for (const [name, words] of [
      ['reset', /could not be reached/],
      ['invalid_json', /JSON that toolport cannot take/],
      ['nowhere', /could not be reached \(.*ECONNREFUSED/],
      ['redirect', /HTTP 302, a redirect, which toolport does not follow/],
    ] as const) {
      const { status, body } = await call(name);
      expect(status, name).toBe(200);
      expect(body.error?.code, name).toBe('upstream_unavailable');
      expect(body.message, name).toMatch(words);
    }
  });

  it('cuts a 50 MB answer at the limit and answers upstream_unavailable without holding it all', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const { body } = await call('huge');
    expect(body.error.code).toBe('upstream_unavailable');
    expect(body.message).toContain(`more than ${10 * 1024 * 1024} bytes`);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(40 * 1024 * 1024);
  });
});

describe('HTTP tools: sessions', () => {
  it('sends X-Session-Id, so an upstream can keep state per session', async () => {
    const a = `notes-${randomUUID()}`;
    const b = `notes-${randomUUID()}`;
    await call('notes_add', { note: 'first' }, { 'x-session-id': a });
    const second = await call('notes_add', { note: 'second' }, { 'x-session-id': a });
    const other = await call('notes_add', { note: 'elsewhere' }, { 'x-session-id': b });
    expect(second.body.value.notes).toEqual(['first', 'second']);
    expect(other.body.value.notes).toEqual(['elsewhere']);
    const none = await call('notes_add', { note: 'lost' });
    expect(none.body.error.code).toBe('upstream_rejected');
    expect(none.body.message).toContain('this tool needs a session');
  });
});
