/**
 * The audit log (docs/audit.md) on both stores: one entry per call that ran, per policy decision, per
 * approval decision and per admin action; GET /audit for admins with filters and a cursor;
 * AUDIT_FILE as JSON lines whose chain verifies; arguments only with AUDIT_ARGUMENTS=true.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/verify.ts';
import { auditBodyOf, type StoredAuditEntry } from '../../src/store/audit.ts';
import { STORES, get, makeApp, post } from '../helpers/app.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** The entries of GET /audit, newest first, once the batch in flight is written. */
async function audit(app: FastifyInstance, key: string, query = ''): Promise<Record<string, any>[]> {
  await new Promise((resolve) => setTimeout(resolve, 120)); // batches go out within 50 ms
  const page = await get(app, `/audit?limit=100${query}`, bearer(key));
  expect(page.status).toBe(200);
  return page.body.entries as Record<string, any>[];
}

describe.each(STORES)('the audit log (%s)', (kind) => {
  let app: FastifyInstance;
  let fixture: PolicyFixture;
  let file: string;

  beforeAll(async () => {
    file = join(mkdtempSync(join(tmpdir(), 'toolport-audit-')), 'audit.jsonl');
    fixture = await policyFixture(undefined, { AUDIT_FILE: file });
    app = await makeApp(kind, { env: fixture.env, register: fixture.register });
  });
  afterAll(() => app.close());

  it('records a call that ran, with hashes and not the arguments', async () => {
    expect((await post(app, { name: 'payments_refund', arguments: { order: 'A1', amount: 5 } }, bearer(fixture.keys.agent))).body.success).toBe(true);
    const [entry] = await audit(app, fixture.keys.ops, '&kind=call');
    expect(entry).toMatchObject({ kind: 'call', caller: 'agent', tool: 'payments_refund', outcome: 'success', rule: null, approval_id: null });
    expect(entry!.tool_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(entry!.arguments_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(entry).not.toHaveProperty('arguments');
  });

  it('records policy decisions, approval decisions and admin actions', async () => {
    const denied = await post(app, { name: 'wipe_disk', arguments: {} }, bearer(fixture.keys.agent));
    expect(denied.body.error.code).toBe('policy_denied');
    const held = await post(app, { name: 'payments_refund', arguments: { order: 'A2', amount: 5000 } }, bearer(fixture.keys.agent));
    expect(held.body.error.code).toBe('approval_required');
    const id = held.body.approval.id as string;
    const decided = await post(app, { decision: 'approve' }, bearer(fixture.keys.finance), `/approvals/${id}/decision`);
    expect(decided.status).toBe(200);
    const ran = await post(app, { name: 'payments_refund', arguments: { order: 'A2', amount: 5000 } }, bearer(fixture.keys.agent));
    expect(ran.body.success).toBe(true);
    const removed = await app.inject({ method: 'DELETE', url: '/sessions/no-such-session', headers: bearer(fixture.keys.ops) });
    expect(removed.statusCode).toBe(204);

    const entries = await audit(app, fixture.keys.ops);
    const [admin, call, approval, hold, deny] = entries;
    expect(deny).toMatchObject({ kind: 'policy', tool: 'wipe_disk', rule: 'policy[1]', outcome: 'policy_denied', caller: 'agent' });
    expect(hold).toMatchObject({ kind: 'policy', rule: 'policy[0]', outcome: 'approval_required', approval_id: id });
    expect(approval).toMatchObject({ kind: 'approval', caller: 'finance', on_behalf_of: 'agent', approval_id: id, outcome: 'approved', rule: 'policy[0]' });
    expect(call).toMatchObject({ kind: 'call', rule: 'policy[0]', approval_id: id, outcome: 'success', caller: 'agent' });
    expect(admin).toMatchObject({ kind: 'admin', caller: 'ops', outcome: '204', detail: 'DELETE /sessions/no-such-session' });
    // Filters and the cursor.
    expect((await audit(app, fixture.keys.ops, '&kind=approval')).map((e) => e.kind)).toEqual(['approval']);
    expect((await audit(app, fixture.keys.ops, '&outcome=policy_denied')).map((e) => e.tool)).toEqual(['wipe_disk']);
    const first = await get(app, '/audit?limit=2', bearer(fixture.keys.ops));
    const second = await get(app, `/audit?limit=2&cursor=${first.body.next_cursor}`, bearer(fixture.keys.ops));
    expect(second.body.entries[0].seq).toBe(first.body.entries[1].seq - 1);
    // Times compare with or without milliseconds.
    const at = (entries[2]!.at as string).slice(0, 19);
    const window = await get(app, `/audit?since=${at}Z&until=${at}.999Z`, bearer(fixture.keys.ops));
    expect(window.body.entries.map((e: Record<string, unknown>) => e.seq)).toContain(entries[2]!.seq);
    expect((await get(app, '/audit?since=2999-01-01T00:00:00Z', bearer(fixture.keys.ops))).body.entries).toEqual([]);
  });

  it('answers GET /audit to admins only', async () => {
    expect((await get(app, '/audit', bearer(fixture.keys.agent))).status).toBe(403);
  });

  it('writes AUDIT_FILE as JSON lines whose chain verifies', async () => {
    await audit(app, fixture.keys.ops);
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(6);
    async function* entries(): AsyncGenerator<StoredAuditEntry> {
      for (const text of lines) {
        const line = JSON.parse(text) as Record<string, unknown>;
        yield { seq: line.seq as number, prev: line.prev as string, hash: line.hash as string, body: auditBodyOf(line) };
      }
    }
    expect((await verifyChain(entries())).broken).toBeNull();
    const edited = lines.map((text, i) => (i === 2 ? text.replace('"caller":"agent"', '"caller":"ops"') : text));
    lines.splice(0, lines.length, ...edited);
    expect((await verifyChain(entries())).broken).toEqual({ seq: JSON.parse(lines[2]!).seq, problem: expect.stringMatching(/was changed/) });
  });
});

describe('the audit log with AUDIT_ARGUMENTS=true', () => {
  it('keeps the arguments', async () => {
    const app = await makeApp('memory', { env: { AUDIT_ARGUMENTS: 'true' } });
    try {
      await post(app, { name: 'echo', arguments: { text: 'kept' } });
      await new Promise((resolve) => setTimeout(resolve, 120));
      const page = await get(app, '/audit?kind=call');
      expect(page.body.entries[0]).toMatchObject({ tool: 'echo', arguments: { text: 'kept' } });
    } finally {
      await app.close();
    }
  });
});
