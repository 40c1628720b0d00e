/** Callers (docs/operations.md): bearer keys, tool allowlists, admin routes, rate limits, identity, no secrets in logs. */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { ApiKeys } from '../../src/callers/keys.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { ConfigError } from '../../src/errors.ts';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const SECRETS = { admin: `sk-admin-${randomUUID()}`, agent: `sk-agent-${randomUUID()}`, limited: `sk-limited-${randomUUID()}` };
const KEYS = [
  { id: 'ops', key_sha256: sha(SECRETS.admin), tools: ['*'], admin: true },
  { id: 'agent', key_sha256: sha(SECRETS.agent), tools: ['echo', 'planning_*', 'introspect_*'] },
  { id: 'limited', key_sha256: sha(SECRETS.limited), tools: ['echo'], rate_per_min: 3 },
];
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function keysFile(records: unknown, format: 'json' | 'yaml'): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-keys-'));
  const file = path.join(dir, `keys.${format}`);
  await writeFile(file, format === 'json' ? JSON.stringify(records) : toYaml(records));
  return file;
}

describe('API keys', () => {
  let app: FastifyInstance;
  const lines: string[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'trace' }, new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) }));
    app = await makeApp('memory', { env: { API_KEYS_FILE: await keysFile(KEYS, 'yaml') }, logger });
  });
  afterAll(() => app.close());

  it('answers 401 problems without a key or with a wrong one, and leaves /healthz and /readyz open', async () => {
    for (const headers of [{}, bearer('sk-wrong'), { authorization: SECRETS.agent }, { authorization: `Basic ${SECRETS.agent}` }]) {
      const response = await post(app, { name: 'echo', arguments: { text: 'x' } }, headers);
      expect(response.status).toBe(401);
      expect(response.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      expect((await get(app, '/tools', headers)).status).toBe(401);
    }
    expect((await get(app, '/healthz')).status).toBe(200);
    expect((await get(app, '/readyz')).status).toBe(200);
    expect((await post(app, { name: 'echo', arguments: { text: 'x' } }, bearer(SECRETS.agent))).body.success).toBe(true);
  });

  it('treats a tool outside the key globs as unknown, and does not name it', async () => {
    const result = (await post(app, { name: 'counter', arguments: {} }, bearer(SECRETS.agent))).body;
    expect(result).toMatchObject({ success: false, error: { code: 'unknown_tool' } });
    const listed = result.message.split('Tools you can call:')[1];
    expect(listed).toMatch(/echo/);
    expect(listed).not.toMatch(/counter|big|secret/);
    expect((await post(app, { name: 'counter', arguments: {} }, { ...bearer(SECRETS.admin), 'x-session-id': 's-admin' })).body.success).toBe(true);
  });

  it('lists only the tools a key may call, in every discovery format, with the hash of that catalog', async () => {
    const all = (await get(app, '/tools', bearer(SECRETS.admin))).body;
    for (const format of ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp']) {
      const response = await get(app, `/tools?format=${format}`, bearer(SECRETS.agent));
      expect(response.status).toBe(200);
      const text = JSON.stringify(response.body.tools);
      expect(text).toContain('"echo"');
      expect(text).toContain('planning_read_plan');
      expect(text, format).not.toMatch(/"(counter|delegates|big|secret)"/);
      expect(response.body.hash).not.toBe(all.hash);
    }
    const own = (await get(app, '/tools', bearer(SECRETS.agent))).body;
    expect(own.tools.map((t: { name: string }) => t.name).sort()).toEqual(
      all.tools
        .map((t: { name: string }) => t.name)
        .filter((n: string) => n === 'echo' || /^(planning|introspect)_/.test(n))
        .sort(),
    );
    expect((await get(app, '/tools/counter', bearer(SECRETS.agent))).status).toBe(404);
    expect((await get(app, '/tools/counter/versions', bearer(SECRETS.agent))).status).toBe(404);
    const counterHash = all.tools.find((t: { name: string }) => t.name === 'counter').hash;
    expect((await get(app, `/tools/hashes/${counterHash}`, bearer(SECRETS.agent))).status).toBe(404);
    expect((await get(app, `/tools/hashes/${counterHash}`, bearer(SECRETS.admin))).status).toBe(200);
    expect((await get(app, '/tools?tool_choice=counter&format=openai', bearer(SECRETS.agent))).status).toBe(400);
  });

  it("lists only the key's tools over MCP, and refuses /mcp without a key", async () => {
    const rpc = (body: unknown, headers: Record<string, string>) =>
      app.inject({
        method: 'POST',
        url: '/mcp',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
        payload: JSON.stringify(body),
      });
    expect((await rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, {})).statusCode).toBe(401);
    const names = (headers: Record<string, string>) =>
      rpc({ jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers).then((r) => (r.json().result.tools as { name: string }[]).map((t) => t.name));
    const agent = await names(bearer(SECRETS.agent));
    expect(agent).toContain('echo');
    expect(agent).not.toContain('counter');
    expect(await names(bearer(SECRETS.admin))).toContain('counter');
    const call = (await rpc({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'counter', arguments: {} } }, bearer(SECRETS.agent))).json();
    expect(call.result).toMatchObject({ isError: true });
    expect(call.result.content[0].text).toMatch(/^Unknown tool "counter"/);
  });

  it('keeps nested calls inside the allowlist too', async () => {
    // "delegates" is outside the agent's globs; the admin may call it, and it may call echo.
    expect((await post(app, { name: 'delegates', arguments: { text: 'y' } }, bearer(SECRETS.agent))).body.error.code).toBe('unknown_tool');
    expect((await post(app, { name: 'delegates', arguments: { text: 'y' } }, bearer(SECRETS.admin))).body.success).toBe(true);
  });

  it('allows admin routes only to admin keys (403 otherwise)', async () => {
    const forbidden = await app.inject({ method: 'DELETE', url: '/sessions/s1', headers: bearer(SECRETS.agent) });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.headers['content-type']).toMatch(/application\/problem\+json/);
    expect((await app.inject({ method: 'DELETE', url: '/sessions/s1', headers: bearer(SECRETS.admin) })).statusCode).toBe(204);
    for (const [method, url] of [
      ['GET', '/ledger/effects/global%3Aecho%3Ax'],
      ['DELETE', '/ledger/effects/global%3Aecho%3Ax'],
      ['DELETE', '/ledger/tools/echo'],
      ['DELETE', '/ledger?scope=global'],
    ] as const) {
      expect((await app.inject({ method, url, headers: bearer(SECRETS.agent) })).statusCode, `${method} ${url}`).toBe(403);
      expect((await app.inject({ method, url, headers: bearer(SECRETS.admin) })).statusCode, `${method} ${url}`).not.toBe(403);
    }
  });

  it("gives handlers and events the key's id as the caller", async () => {
    const session = `caller-${randomUUID()}`;
    await post(app, { name: 'echo', arguments: { text: 'x' } }, { ...bearer(SECRETS.agent), 'x-session-id': session });
    const events = await (async () => {
      const response = await get(app, `/sessions/${session}/events`, bearer(SECRETS.agent));
      return response.body.events as { caller: string }[];
    })();
    expect(events.map((e) => e.caller)).toEqual(['agent']);
    const introspected = (await post(app, { name: 'introspect_catalog', arguments: {} }, bearer(SECRETS.agent))).body.value;
    const names = introspected.tools.map((t: { name: string }) => t.name);
    expect(names).toContain('echo');
    expect(names).not.toContain('counter');
    expect(names.every((n: string) => n === 'echo' || n.startsWith('planning_') || n.startsWith('introspect_'))).toBe(true);
  });

  it('never writes a secret to the log, and names the caller in the lines of its calls', async () => {
    await post(app, { name: 'echo', arguments: { text: 'x' } }, bearer(SECRETS.agent));
    await post(app, { name: 'echo', arguments: { text: 'x' } }, bearer(`${SECRETS.agent}-nope`));
    const log = lines.join('');
    expect(log).toContain('"caller":"agent"');
    for (const secret of Object.values(SECRETS)) expect(log).not.toContain(secret);
  });
});

describe('API key files', () => {
  it('reads JSON as well as YAML', async () => {
    const app = await makeApp('memory', { env: { API_KEYS_FILE: await keysFile(KEYS, 'json') } });
    try {
      expect((await post(app, { name: 'echo', arguments: { text: 'x' } }, bearer(SECRETS.agent))).status).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('stops the start with a message naming the problem', () => {
    expect(() => ApiKeys.from([{ id: 'a', key_sha256: 'short', tools: [] }])).toThrow(ConfigError);
    expect(() =>
      ApiKeys.from([
        { id: 'a', key_sha256: sha('x'), tools: ['*'] },
        { id: 'a', key_sha256: sha('y'), tools: ['*'] },
      ]),
    ).toThrow(/appears twice/);
    expect(() => ApiKeys.from({ keys: 'none' })).toThrow(/must be a list of keys or \{keys/);
    expect(() => ApiKeys.from({ keys: [], access: [{ groups: ['x'] }] })).toThrow(/access\/0 must have required property 'tools'/);
    expect(() => ApiKeys.from([{ id: 'user:alice', key_sha256: sha('x'), tools: ['*'] }])).toThrow(/must not start with "user:"/);
    expect(() => ApiKeys.from([{ id: 'a', key_sha256: sha('x'), tools: ['*'], extra: 1 }])).toThrow(ConfigError);
  });
});

describe('rate limits', () => {
  const apps: FastifyInstance[] = [];
  beforeAll(async () => {
    const env = { API_KEYS_FILE: await keysFile(KEYS, 'json'), KEY_PREFIX: `rl-${randomUUID().slice(0, 8)}:` };
    apps.push(await makeApp('redis', { env }), await makeApp('redis', { env }));
  });
  afterAll(() => Promise.all(apps.map((app) => app.close())));

  it('answers 429 with Retry-After once a key has used its rate_per_min, counted across replicas', async () => {
    const call = (i: number) => post(apps[i % 2]!, { name: 'echo', arguments: { text: 'x' } }, bearer(SECRETS.limited));
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await call(i)).status);
    expect(statuses).toEqual([200, 200, 200]);
    const limited = await call(3);
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.detail).toMatch(/3 requests a minute/);
    // Keys without rate_per_min are not limited.
    for (let i = 0; i < 5; i++) expect((await post(apps[i % 2]!, { name: 'echo', arguments: { text: 'x' } }, bearer(SECRETS.agent))).status).toBe(200);
  });
});
