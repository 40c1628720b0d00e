/**
 * Definitions that change upstream (docs/mcp-sources.md, docs/design.md provenance): our own small MCP server
 * rewrites its `greet` tool at run time and sends notifications/tools/list_changed. Without `pin`
 * the change is served and recorded as a new version; with `pin` the pinned definition stays, calls
 * answer tool_changed without reaching the server, and an admin's accept makes the change current
 * on every replica (two replicas on one Redis, each with its own server process).
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from '../helpers/app.ts';
import { CHANGING, eventually, makeMcpApp, stdioServer } from '../helpers/mcp-upstreams.ts';

const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
const ADMIN = `sk-admin-${randomUUID()}`;
const AGENT = `sk-agent-${randomUUID()}`;
const bearer = (secret: string) => ({ authorization: `Bearer ${secret}` });

async function keysFile(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'toolport-pin-keys-'));
  const file = path.join(dir, 'keys.json');
  await writeFile(
    file,
    JSON.stringify([
      { id: 'ops', key_sha256: sha(ADMIN), tools: ['*'], admin: true },
      { id: 'agent', key_sha256: sha(AGENT), tools: ['*'] },
    ]),
  );
  return file;
}

const greetTool = async (app: FastifyInstance, headers: Record<string, string> = {}) => (await get(app, '/tools/own_greet', headers)).body;
const greetings = async (app: FastifyInstance, headers: Record<string, string> = {}) =>
  (await post(app, { name: 'own_greetings', arguments: {} }, headers)).body.value.count as number;

describe('an upstream definition change without pin', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeMcpApp('memory', [stdioServer('own', CHANGING)]);
  });
  afterAll(() => app?.close());

  it('is served at once, recorded as a new version, and moves the catalog hash and ETag', async () => {
    const before = await greetTool(app);
    const catalog = await get(app, '/tools');
    expect(before.description).toBe('Greets someone by name.');
    expect((await post(app, { name: 'own_change_greet', arguments: {} })).body.success).toBe(true);
    await eventually('the new definition is listed', async () => (await greetTool(app)).description === 'Greets someone by name, formally if asked.');
    const after = await greetTool(app);
    expect(after.hash).not.toBe(before.hash);
    expect(after.parameters.properties.formal).toEqual({ type: 'boolean' });
    const recatalog = await get(app, '/tools', { 'if-none-match': catalog.headers.etag as string });
    expect(recatalog.status).toBe(200);
    expect(recatalog.headers.etag).not.toBe(catalog.headers.etag);
    const mcp = await post(app, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' }, '/mcp');
    expect(mcp.body.result.tools.find((t: { name: string }) => t.name === 'own_greet').inputSchema.properties.formal).toBeDefined();
    const call = await post(app, { name: 'own_greet', arguments: { name: 'Ada', formal: true } });
    expect(call.body).toMatchObject({ success: true, message: 'Good day, Ada.', tool_hash: after.hash });
    const versions = await get(app, '/tools/own_greet/versions');
    expect(versions.body.versions.map((v: { hash: string }) => v.hash)).toEqual([before.hash, after.hash]);
    expect(versions.body.versions.some((v: { pending?: boolean }) => v.pending)).toBe(false);
    expect((await get(app, `/tools/hashes/${before.hash}`)).body.definition.description).toBe('Greets someone by name.');
  });
});

describe.each([
  ['redis', 2],
  ['memory', 1],
] as const)('an upstream definition change with pin: true (%s store, %i replicas)', (store, replicas) => {
  const prefix = `pin-${randomUUID().slice(0, 8)}:`;
  let apps: FastifyInstance[] = [];
  let one: FastifyInstance;
  let two: FastifyInstance;
  beforeAll(async () => {
    const env = { KEY_PREFIX: prefix, API_KEYS_FILE: await keysFile() };
    apps = await Promise.all(Array.from({ length: replicas }, () => makeMcpApp(store, [stdioServer('own', CHANGING, { pin: true })], { env })));
    one = apps[0]!;
    two = apps.at(-1)!;
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('keeps serving the pinned definition; calls answer tool_changed without reaching the server; accept makes it current everywhere', async () => {
    const admin = bearer(ADMIN);
    const pinned = await greetTool(one, admin);
    expect((await post(one, { name: 'own_greet', arguments: { name: 'Ada' } }, admin)).body.message).toBe('Hello, Ada.');
    // Each replica runs its own server process: both change.
    for (const app of apps) expect((await post(app, { name: 'own_change_greet', arguments: {} }, admin)).body.success).toBe(true);
    let pending = '';
    await eventually('the change is pending', async () => {
      const versions = (await get(one, '/tools/own_greet/versions', admin)).body.versions as { hash: string; pending?: boolean }[];
      pending = versions.find((v) => v.pending)?.hash ?? '';
      return pending !== '';
    });
    expect(pending).not.toBe(pinned.hash);
    for (const app of apps) {
      // Each replica learns of its own server's change by the server's list_changed notification.
      await eventually(
        'the replica holds the change back',
        async () => (await post(app, { name: 'own_greet', arguments: { name: 'Ada' } }, admin)).body.error?.code === 'tool_changed',
      );
      const listed = await greetTool(app, admin);
      expect(listed).toMatchObject({ hash: pinned.hash, description: 'Greets someone by name.' });
      const before = await greetings(app, admin);
      const call = await post(app, { name: 'own_greet', arguments: { name: 'Ada' } }, admin);
      expect(call.body).toMatchObject({ success: false, error: { code: 'tool_changed' }, tool_hash: pinned.hash });
      expect(call.body.content).toMatch(/unavailable until a person reviews it/);
      expect(await greetings(app, admin)).toBe(before);
    }
    expect((await get(two, '/tools/own_greet/versions', admin)).body.versions).toEqual([
      { hash: pinned.hash, first_served_at: expect.any(String) },
      { hash: pending, first_served_at: expect.any(String), pending: true },
    ]);

    const pendingOf = async (app: FastifyInstance) =>
      ((await get(app, '/sources', admin)).body.sources as { name: string; pending: number }[]).find((s) => s.name === 'own')?.pending;
    expect(await pendingOf(two)).toBe(1);

    const refused = await post(one, { hash: pending }, bearer(AGENT), '/tools/own_greet/accept');
    expect(refused.status).toBe(403);
    const unknown = await post(one, { hash: 'f'.repeat(64) }, admin, '/tools/own_greet/accept');
    expect(unknown.status).toBe(404);
    const accepted = await post(one, { hash: pending }, admin, '/tools/own_greet/accept');
    expect(accepted).toMatchObject({ status: 200, body: { name: 'own_greet', current: pending, pending: null } });

    for (const app of apps) {
      await eventually('the accepted definition is served', async () => (await greetTool(app, admin)).hash === pending);
      const call = await post(app, { name: 'own_greet', arguments: { name: 'Ada', formal: true } }, admin);
      expect(call.body).toMatchObject({ success: true, message: 'Good day, Ada.', tool_hash: pending });
    }
    const versions = (await get(one, '/tools/own_greet/versions', admin)).body.versions as { pending?: boolean }[];
    expect(versions.some((v) => v.pending)).toBe(false);
    for (const app of apps) await eventually('no change is pending', async () => (await pendingOf(app)) === 0);
  });
});
