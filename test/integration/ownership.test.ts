/**
 * Ownership (docs/identity.md): two users side by side on two replicas sharing one real Redis. Each sees
 * only their own sessions, tasks, results and ledger entries; the other's are 404 (or a fresh,
 * separate session of the same name); an admin sees all.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';

const PUBLIC_URL = 'https://toolport.example';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ASYNC = { prefer: 'respond-async' };

describe('two users on two replicas sharing Redis', () => {
  let issuer: TestIssuer;
  let one: FastifyInstance;
  let two: FastifyInstance;
  const users: Record<'alice' | 'bob' | 'root', Record<string, string>> = { alice: {}, bob: {}, root: {} };
  let charged = 0;

  beforeAll(async () => {
    issuer = await startIssuer();
    const file = path.join(await mkdtemp(path.join(tmpdir(), 'toolport-owners-')), 'keys.yaml');
    await writeFile(file, JSON.stringify({ keys: [], access: [{ tools: ['*'] }, { groups: ['ops'], tools: ['*'], admin: true }] }));
    const env = {
      API_KEYS_FILE: file,
      AUTH_ISSUER: issuer.issuer,
      PUBLIC_URL,
      KEY_PREFIX: `test:owners:${randomUUID().slice(0, 8)}:`,
      MAX_CONTENT_CHARS: '500',
    };
    const register = (registry: SourceRegistry) =>
      registry.registerTool({
        name: 'charge',
        description: 'Charges once per user and amount.',
        parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
        idempotency: { strategy: 'auto', scope: 'user' },
        handler: (params, context) => ok({ charged: params.amount, for: context.user?.id ?? null, n: ++charged }, 'charged'),
      });
    one = await makeApp('redis', { env, register });
    two = await makeApp('redis', { env, register });
    for (const [name, groups] of [
      ['alice', []],
      ['bob', []],
      ['root', ['ops']],
    ] as const) {
      users[name] = bearer(await issuer.sign({ sub: name, aud: `${PUBLIC_URL}/mcp`, groups: [...groups] }, { expiresIn: '10m' }));
    }
  });
  afterAll(async () => {
    await one.close();
    await two.close();
    await issuer.close();
  });

  it("keeps each user's session of the same id apart: a fresh separate session for the other, 404 on the other's routes", async () => {
    const id = `shared-${randomUUID()}`;
    const setup = (app: FastifyInstance, user: Record<string, string>, objective: string) =>
      post(app, { name: 'planning_setup_plan', arguments: { objective } }, { ...user, 'x-session-id': id });
    expect((await setup(one, users.alice, "alice's plan")).body.success).toBe(true);
    // Bob names the same id on the other replica: his own, empty session.
    const read = await post(two, { name: 'planning_read_plan', arguments: {} }, { ...users.bob, 'x-session-id': id });
    expect(read.body.message).toMatch(/No plan yet/);
    expect((await get(two, `/sessions/${id}/plan`, users.bob)).status).toBe(404);
    expect((await setup(two, users.bob, "bob's plan")).body.success).toBe(true);
    expect((await get(two, `/sessions/${id}/plan`, users.alice)).body.objective).toBe("alice's plan");
    expect((await get(one, `/sessions/${id}/plan`, users.bob)).body.objective).toBe("bob's plan");
    const events = (await get(one, `/sessions/${id}/events`, users.alice)).body.events;
    expect(events.map((e: { caller: string }) => e.caller)).toEqual(['user:alice']);
    // Naming the other as owner finds nothing; an admin may.
    expect((await get(one, `/sessions/${id}/plan?owner=user:alice`, users.bob)).status).toBe(404);
    expect((await get(one, `/sessions/${id}/plan?owner=user:alice`, users.root)).body.objective).toBe("alice's plan");
    expect((await get(one, `/sessions/${id}/plan`, users.root)).status).toBe(404); // the admin's own session of that id
    expect((await two.inject({ method: 'DELETE', url: `/sessions/${id}?owner=user:bob`, headers: users.root })).statusCode).toBe(204);
    expect((await get(one, `/sessions/${id}/plan`, users.bob)).status).toBe(404);
    expect((await get(one, `/sessions/${id}/plan`, users.alice)).status).toBe(200);
  });

  it("answers 404 for another user's task, on either replica, and lists only one's own", async () => {
    const started = await post(one, { name: 'echo', arguments: { text: 'mine' } }, { ...users.alice, ...ASYNC });
    expect(started.status).toBe(202);
    const id = started.body.task_id as string;
    expect((await get(two, `/tasks/${id}`, users.bob)).status).toBe(404);
    expect((await get(one, `/tasks/${id}`, users.bob)).status).toBe(404);
    expect((await get(two, `/tasks/${id}`, users.alice)).status).toBe(200);
    expect((await get(two, `/tasks/${id}`, users.root)).status).toBe(200);
    const listed = (await get(two, '/tasks?limit=100', users.bob)).body.tasks.map((t: { task_id: string }) => t.task_id);
    expect(listed).not.toContain(id);
    expect((await get(two, '/tasks?limit=100', users.alice)).body.tasks.map((t: { task_id: string }) => t.task_id)).toContain(id);
  });

  it('serves a kept result to the user who made the call and an admin, 404 to the other', async () => {
    const result = (await post(one, { name: 'big', arguments: { size: 5000 } }, users.alice)).body;
    const url = result.result_ref.url as string;
    expect((await get(two, url, users.alice)).status).toBe(200);
    expect((await get(two, url, users.bob)).status).toBe(404);
    expect((await get(one, url, users.root)).status).toBe(200);
  });

  it('partitions a user-scoped ledger entry by user: each runs once, a repeat replays', async () => {
    const before = charged;
    const first = await post(one, { name: 'charge', arguments: { amount: 5 } }, users.alice);
    const again = await post(two, { name: 'charge', arguments: { amount: 5 } }, users.alice);
    const bobs = await post(two, { name: 'charge', arguments: { amount: 5 } }, users.bob);
    expect(first.body.value).toMatchObject({ for: 'alice' });
    expect(again.body).toMatchObject({ replayed: true, value: { for: 'alice' } });
    expect(bobs.body).toMatchObject({ value: { for: 'bob' } });
    expect(bobs.body.replayed ?? false).toBe(false);
    expect(charged - before).toBe(2);
    expect(first.body.idempotency_key).toMatch(/^user:user:alice:charge:/);
  });
});
