/**
 * Users' tasks and limits (docs/identity.md, docs/tasks.md): a task a JWT user starts — over HTTP with
 * `Prefer: respond-async` or over MCP — runs as that user on whichever replica claims it
 * (`context.user`, their own credential, their `user` ledger scope) and is 404 to every other
 * user. Each user's `rate_per_min` counts for that user only. Two replicas share one real Redis.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';
import { collectLogs, expectNoSecretsIn } from '../helpers/secrets-scan.ts';

const PUBLIC_URL = 'https://toolport.example';
const SECRETS_KEY = randomBytes(32).toString('hex');
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ASYNC = { prefer: 'respond-async' };
const fingerprint = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 12);
const SECRETS = { alice: `alice-key-${randomUUID()}`, bob: `bob-key-${randomUUID()}`, carol: `carol-key-${randomUUID()}`, dave: `dave-key-${randomUUID()}` };

type User = 'alice' | 'bob' | 'carol' | 'dave' | 'root' | 'limited' | 'limited2';

describe("JWT users' tasks and limits on two replicas sharing Redis", () => {
  let issuer: TestIssuer;
  let one: FastifyInstance;
  let two: FastifyInstance;
  const prefix = `test:usertasks:${randomUUID().slice(0, 8)}:`;
  const logs = collectLogs();
  const users = {} as Record<User, Record<string, string>>;
  let charged = 0;

  beforeAll(async () => {
    issuer = await startIssuer();
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-user-tasks-'));
    const keys = path.join(dir, 'keys.json');
    const tools = path.join(dir, 'tools.json');
    await writeFile(
      keys,
      JSON.stringify({
        keys: [],
        access: [
          { groups: ['staff'], tools: ['*'] },
          { groups: ['ops'], tools: ['*'], admin: true },
          { groups: ['limited'], tools: ['echo'], rate_per_min: 2 },
        ],
      }),
    );
    await writeFile(tools, JSON.stringify({ credentials: { weather_key: { type: 'secret' } } }));
    const register = (registry: SourceRegistry) => {
      registry.registerTool({
        name: 'profile',
        description: "Who the call runs for, and a fingerprint of that user's weather key.",
        parameters: { type: 'object', properties: { nonce: { type: 'string' } } },
        credentials: ['weather_key'],
        idempotency: { strategy: 'auto', scope: 'user' },
        handler: async (_params, context) => {
          const key = await context.credentials.get('weather_key');
          return ok({ user: context.user?.id ?? null, key: fingerprint(key), n: ++charged }, 'profiled');
        },
      });
    };
    const env = {
      API_KEYS_FILE: keys,
      TOOLS_FILE: tools,
      AUTH_ISSUER: issuer.issuer,
      PUBLIC_URL,
      SECRETS_KEY,
      KEY_PREFIX: prefix,
      LOG_LEVEL: 'debug',
    };
    // Replica one runs one task at a time, so a second task waits in the queue for replica two.
    one = await makeApp('redis', { env: { ...env, TASK_CONCURRENCY: '1' }, register, logger: logs.logger });
    two = await makeApp('redis', { env, register, logger: logs.logger });
    for (const [name, groups] of [
      ['alice', ['staff']],
      ['bob', ['staff']],
      ['carol', ['staff']],
      ['dave', ['staff']],
      ['root', ['ops']],
      ['limited', ['limited']],
      ['limited2', ['limited']],
    ] as const) {
      users[name] = bearer(await issuer.sign({ sub: name, aud: `${PUBLIC_URL}/mcp`, groups: [...groups] }, { expiresIn: '10m' }));
    }
    for (const name of ['alice', 'bob'] as const) await putSecret(one, users[name], SECRETS[name]);
  });
  const putSecret = async (app: FastifyInstance, user: Record<string, string>, value: string) => {
    const put = await app.inject({
      method: 'PUT',
      url: '/me/credentials/weather_key',
      headers: { ...user, 'content-type': 'application/json' },
      payload: { value },
    });
    expect(put.statusCode).toBe(204);
  };
  const mcp = async (app: FastifyInstance, user: Record<string, string>, method: string, params: Record<string, unknown>) =>
    (
      await post(
        app,
        { jsonrpc: '2.0', id: 1, method, params },
        { ...user, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
        '/mcp',
      )
    ).body;

  afterAll(async () => {
    await one?.close();
    await two?.close();
    await issuer?.close();
  });

  it("runs a respond-async task as its user on the replica that claims it: context.user, the user's credential, the user's ledger scope", async () => {
    // Replica one's only slot is taken: alice's task waits in the queue and replica two runs it.
    const busy = await post(one, { name: 'slow', arguments: { ms: 1500 } }, { ...users.root, ...ASYNC });
    expect(busy.status).toBe(202);
    const nonce = randomUUID();
    const started = await post(one, { name: 'profile', arguments: { nonce } }, { ...users.alice, ...ASYNC });
    expect(started.status).toBe(202);
    expect(started.body.queued).toBe(true);
    const id = started.body.task_id as string;
    const done = await get(two, `/tasks/${id}?wait_ms=10000`, users.alice);
    expect(done.body.status, JSON.stringify(done.body)).toBe('completed');
    const result = done.body.result;
    expect(result.success, result.message).toBe(true);
    expect(result.value).toMatchObject({ user: 'alice', key: fingerprint(SECRETS.alice) });
    expect(result.idempotency_key).toMatch(/^user:user:alice:profile:/);

    // The other user: 404 on both replicas, absent from their list; an admin sees it.
    for (const app of [one, two]) expect((await get(app, `/tasks/${id}`, users.bob)).status).toBe(404);
    expect((await get(two, '/tasks?limit=100', users.bob)).body.tasks.map((t: { task_id: string }) => t.task_id)).not.toContain(id);
    expect((await get(one, `/tasks/${id}`, users.root)).status).toBe(200);

    // The same arguments from alice replay her entry; from bob they run for bob, with bob's key.
    const before = charged;
    const replayed = await post(two, { name: 'profile', arguments: { nonce } }, users.alice);
    expect(replayed.body).toMatchObject({ replayed: true, value: { user: 'alice' } });
    const bobs = await get(
      two,
      `/tasks/${(await post(two, { name: 'profile', arguments: { nonce } }, { ...users.bob, ...ASYNC })).body.task_id}?wait_ms=10000`,
      users.bob,
    );
    expect(bobs.body.result.value).toMatchObject({ user: 'bob', key: fingerprint(SECRETS.bob) });
    expect(bobs.body.result.replayed ?? false).toBe(false);
    expect(charged - before).toBe(1);
  });

  it("runs an MCP task as its user, and answers another user's tasks/get and tasks/result as unknown", async () => {
    const created = await mcp(one, users.alice, 'tools/call', { name: 'profile', arguments: { nonce: randomUUID() }, task: { ttl: 60_000 } });
    const taskId = created.result?.task?.taskId as string;
    expect(typeof taskId, JSON.stringify(created)).toBe('string');
    const result = await mcp(two, users.alice, 'tasks/result', { taskId });
    expect(result.result.isError ?? false, JSON.stringify(result)).toBe(false);
    expect(result.result.structuredContent).toMatchObject({ user: 'alice', key: fingerprint(SECRETS.alice) });
    for (const method of ['tasks/get', 'tasks/result', 'tasks/cancel']) {
      const refused = await mcp(two, users.bob, method, { taskId });
      expect(refused.error, method).toMatchObject({ code: -32602, message: expect.stringMatching(/^no task/) });
    }
    expect((await mcp(one, users.bob, 'tasks/list', {})).result.tasks.map((t: { taskId: string }) => t.taskId)).not.toContain(taskId);
    expect((await get(one, `/tasks/${taskId}`, users.alice)).status).toBe(200);
    expect((await get(one, `/tasks/${taskId}`, users.bob)).status).toBe(404);
  });

  it('runs a task that waits for a connection again once its user stores the credential, on any replica', async () => {
    const started = await post(one, { name: 'profile', arguments: { nonce: randomUUID() } }, { ...users.carol, ...ASYNC });
    const id = started.body.task_id as string;
    const waiting = await get(one, `/tasks/${id}?wait_ms=10000`, users.carol);
    expect(waiting.body.status, JSON.stringify(waiting.body)).toBe('input_required');
    expect(waiting.body.authorization).toMatchObject({ credential: 'weather_key', url: expect.stringContaining('/connections/weather_key/start?link=') });
    // Another user storing the same credential resumes nothing of carol's.
    await putSecret(two, users.bob, SECRETS.bob);
    expect((await get(one, `/tasks/${id}`, users.carol)).body.status).toBe('input_required');
    await putSecret(two, users.carol, SECRETS.carol);
    const done = await vi.waitUntil(
      async () => {
        const now = await get(two, `/tasks/${id}?wait_ms=2000`, users.carol);
        return now.body.status === 'completed' ? now.body : null;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(done.result.value).toMatchObject({ user: 'carol', key: fingerprint(SECRETS.carol) });
    expect(done.attempts).toBe(2);
  });

  it("answers an MCP task's tasks/result once its user connects through the task's link", async () => {
    const created = await mcp(one, users.dave, 'tools/call', { name: 'profile', arguments: { nonce: randomUUID() }, task: { ttl: 60_000 } });
    const taskId = created.result.task.taskId as string;
    const result = mcp(two, users.dave, 'tasks/result', { taskId });
    const waiting = await vi.waitUntil(
      async () => {
        const now = await get(one, `/tasks/${taskId}`, users.dave);
        return now.body.status === 'input_required' ? now.body : null;
      },
      { timeout: 10_000, interval: 100 },
    );
    const link = new URL(waiting.authorization.url as string);
    const shown = await two.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
    expect(shown.body).toContain('Continue');
    const form = await one.inject({
      method: 'POST',
      url: link.pathname,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ link: link.searchParams.get('link')! }).toString(),
    });
    const state = /name="state" value="([^"]+)"/.exec(form.body)![1]!;
    const saved = await one.inject({
      method: 'POST',
      url: '/connections/weather_key/callback',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ state, value: SECRETS.dave }).toString(),
    });
    expect(saved.statusCode).toBe(200);
    const answered = await result;
    expect(answered.result?.structuredContent, JSON.stringify(answered)).toMatchObject({ user: 'dave', key: fingerprint(SECRETS.dave) });
  });

  it("limits each user to their own rate_per_min: one user's 429 leaves another's calls alone", async () => {
    const echo = (app: FastifyInstance, user: Record<string, string>) => post(app, { name: 'echo', arguments: { text: 'hi' } }, user);
    expect((await echo(one, users.limited)).status).toBe(200);
    expect((await echo(two, users.limited)).status).toBe(200);
    // The count is shared by the replicas (Redis): the third call within the minute is refused on either.
    const refused = await echo(one, users.limited);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(refused.body.detail).toMatch(/^user "user:limited" may make 2 requests a minute/);
    expect((await echo(two, users.limited)).status).toBe(429);
    // Another user of the same rule has a count of their own; users of rules without a limit are not limited.
    expect((await echo(two, users.limited2)).status).toBe(200);
    expect((await echo(one, users.limited2)).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await echo(one, users.alice)).status).toBe(200);
  });

  it('keeps neither weather key nor any token in plain text in Redis or the log', async () => {
    const tokens = Object.values(users).map((headers) => headers.authorization!.slice('Bearer '.length));
    await expectNoSecretsIn({
      redisPrefix: prefix,
      expectKeys: '{cred:',
      log: logs.text(),
      secrets: [...Object.values(SECRETS), ...tokens.map((t) => t.split('.')[2]!)],
    });
  });
});
