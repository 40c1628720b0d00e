/**
 * Who sees and decides an approval, with JWT users in groups beside API keys: the caller that asked
 * reads it (403 on deciding), an approver by group or key id decides it, an admin always may, and
 * everyone else gets 404 — on the record, on a decision, and in the list.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { startIssuer, type TestIssuer } from '../helpers/issuer.ts';

const PUBLIC_URL = 'https://toolport.example';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');

describe.each(STORES)('who sees and decides an approval (users and keys, %s store)', (kind) => {
  let issuer: TestIssuer;
  let app: FastifyInstance;
  const as: Record<string, Record<string, string>> = {};
  let runs = 0;

  beforeAll(async () => {
    issuer = await startIssuer();
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-approval-owners-'));
    const keys = { agent: `sk-${randomUUID()}`, treasurer: `sk-${randomUUID()}`, other: `sk-${randomUUID()}` };
    await writeFile(
      path.join(dir, 'keys.json'),
      JSON.stringify({
        keys: [
          { id: 'agent', key_sha256: sha(keys.agent), tools: ['*'] },
          { id: 'treasurer', key_sha256: sha(keys.treasurer), tools: [] },
          { id: 'other', key_sha256: sha(keys.other), tools: ['*'] },
        ],
        access: [{ tools: ['*'] }, { groups: ['ops'], tools: ['*'], admin: true }],
      }),
    );
    await writeFile(path.join(dir, 'tools.yaml'), stringify({ policy: [{ tools: ['pay'], action: 'approve', approvers: ['finance', 'treasurer'] }] }));
    const env = { API_KEYS_FILE: path.join(dir, 'keys.json'), TOOLS_FILE: path.join(dir, 'tools.yaml'), AUTH_ISSUER: issuer.issuer, PUBLIC_URL };
    const register = (registry: SourceRegistry) =>
      registry.registerTool({
        name: 'pay',
        description: 'Pays.',
        parameters: { type: 'object', properties: { amount: { type: 'integer' } }, required: ['amount'] },
        handler: (params) => ok({ paid: params.amount, n: ++runs }, 'paid'),
      });
    app = await makeApp(kind, { env, register });
    const users: [string, string[]][] = [
      ['alice', ['staff']],
      ['bob', ['finance']],
      ['carol', ['staff']],
      ['root', ['ops']],
    ];
    for (const [name, groups] of users) as[name] = bearer(await issuer.sign({ sub: name, aud: `${PUBLIC_URL}/mcp`, groups }, { expiresIn: '10m' }));
    for (const [name, key] of Object.entries(keys)) as[name] = bearer(key);
  });
  afterAll(async () => {
    await app?.close();
    await issuer?.close();
  });

  const ask = async (who: string, amount: number): Promise<string> => {
    const answer = await post(app, { name: 'pay', arguments: { amount } }, as[who]);
    expect(answer.body.error?.code, JSON.stringify(answer.body)).toBe('approval_required');
    return answer.body.approval.id as string;
  };
  const decide = (id: string, who: string, decision = 'approve') => post(app, { decision }, as[who], `/approvals/${id}/decision`);
  const listed = async (who: string) =>
    ((await get(app, '/approvals?limit=200', as[who])).body.approvals as { approval_id: string }[]).map((a) => a.approval_id);

  it('answers 404 to a user who neither asked nor may decide, on the record, a decision and the list; the asker reads but may not decide', async () => {
    const id = await ask('alice', 10);
    expect((await get(app, `/approvals/${id}`, as.carol)).status).toBe(404);
    expect((await decide(id, 'carol')).status).toBe(404);
    expect(await listed('carol')).not.toContain(id);
    expect((await get(app, `/approvals/${id}`, as.other)).status).toBe(404);
    expect((await decide(id, 'other', 'deny')).status).toBe(404);
    expect(await listed('other')).not.toContain(id);
    const own = await get(app, `/approvals/${id}`, as.alice);
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({ caller: 'user:alice', user: 'alice', may_decide: false });
    expect(await listed('alice')).toContain(id);
    expect((await decide(id, 'alice')).status).toBe(403);
    expect(runs).toBe(0);
  });

  it('lets a user of an approver group decide, and the asking user then runs the call once', async () => {
    const id = await ask('alice', 20);
    expect((await get(app, `/approvals/${id}`, as.bob)).body.may_decide).toBe(true);
    expect(await listed('bob')).toContain(id);
    const decided = await decide(id, 'bob');
    expect(decided.status).toBe(200);
    expect(decided.body.decision.by).toBe('user:bob');
    const before = runs;
    const ran = await post(app, { name: 'pay', arguments: { amount: 20 } }, as.alice);
    expect(ran.body.success).toBe(true);
    expect(runs).toBe(before + 1);
    // Carol's identical call is hers, not Alice's: held anew, nothing replayed to her.
    const hers = await post(app, { name: 'pay', arguments: { amount: 20 } }, as.carol);
    expect(hers.body.error.code).toBe('approval_required');
    expect(hers.body.approval.id).not.toBe(id);
    expect(runs).toBe(before + 1);
  });

  it("lets an approver key id decide a user's approval, and an admin user see and decide every one", async () => {
    const first = await ask('alice', 30);
    expect((await get(app, `/approvals/${first}`, as.treasurer)).status).toBe(200);
    expect((await decide(first, 'treasurer', 'deny')).body.decision.by).toBe('treasurer');
    const second = await ask('agent', 40);
    expect((await get(app, `/approvals/${second}`, as.root)).body.may_decide).toBe(true);
    expect(await listed('root')).toEqual(expect.arrayContaining([first, second]));
    expect((await decide(second, 'root')).status).toBe(200);
    expect((await decide(second, 'bob')).status).toBe(409);
    expect((await get(app, `/approvals/${second}`, as.alice)).status).toBe(404);
  });
});
