/**
 * Policy and approvals over HTTP (docs/approvals.md), on the memory store and on Redis: rules decide, a held
 * call waits for one decision, the approved call runs once and later identical calls replay it.
 */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';
import { bearer } from '../helpers/keys.ts';
import { policyFixture, type PolicyFixture } from '../helpers/approvals.ts';
import { until } from '../helpers/tasks.ts';

describe.each(STORES)('policy and approvals (%s store)', (kind) => {
  let app: FastifyInstance;
  let fx: PolicyFixture;
  beforeAll(async () => {
    fx = await policyFixture();
    app = await makeApp(kind, { env: fx.env, register: fx.register });
  });
  afterAll(async () => {
    await app?.close();
  });

  const refund = (args: Record<string, unknown>, headers: Record<string, string> = {}) =>
    post(app, { name: 'payments_refund', arguments: args }, { ...bearer(fx.keys.agent), ...headers });
  const decide = (id: string, secret: string, body: unknown) => post(app, body, bearer(secret), `/approvals/${id}/decision`);

  it('runs a call no rule holds, and denies what a deny rule matches with its reason', async () => {
    const small = await refund({ order: 'o-small', amount: 500 });
    expect(small.body.success).toBe(true);
    const wiped = await post(app, { name: 'wipe_disk', arguments: {} }, bearer(fx.keys.agent));
    expect(wiped.status).toBe(200);
    expect(wiped.body).toMatchObject({
      success: false,
      error: { code: 'policy_denied' },
      message: 'Destructive tools are reserved for the ops team; ask a person.',
    });
    expect(fx.runs.get('wipe_disk')).toBeUndefined();
  });

  it('holds a call above the limit, joins identical calls, runs it once when approved and replays it after', async () => {
    const args = { order: 'o-1', amount: 1500.5 };
    const held = await refund(args);
    expect(held.status).toBe(200);
    expect(held.body).toMatchObject({ success: false, error: { code: 'approval_required' }, approval: { status: 'pending' } });
    expect(held.body.message).toMatch(/approval/);
    const id = held.body.approval.id as string;
    expect(held.body.approval.url).toBe(`/approvals/${id}`);
    expect(Date.parse(held.body.approval.expires_at)).toBeGreaterThan(Date.now());
    const again = await refund({ amount: 1500.5, order: 'o-1' });
    expect(again.body.approval.id).toBe(id);
    expect(fx.runs.get('payments_refund') ?? 0).toBe(1); // only the small one

    const listed = await get(app, '/approvals?status=pending', bearer(fx.keys.finance));
    expect(listed.body.approvals.map((a: { approval_id: string }) => a.approval_id)).toContain(id);
    const record = (await get(app, `/approvals/${id}`, bearer(fx.keys.finance))).body;
    expect(record).toMatchObject({
      status: 'pending',
      tool: 'payments_refund',
      arguments: args,
      caller: 'agent',
      rule: 0,
      approvers: ['finance', 'client'],
      decision: null,
      may_decide: true,
    });
    expect(record.arguments_hash).toMatch(/^[0-9a-f]{64}$/);

    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.agent))).body.may_decide).toBe(false);
    expect((await decide(id, fx.keys.agent, { decision: 'approve' })).status).toBe(403);
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.stranger))).status).toBe(404);
    expect((await decide(id, fx.keys.stranger, { decision: 'approve' })).status).toBe(404);

    const approved = await decide(id, fx.keys.finance, { decision: 'approve', note: 'ok by finance' });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: 'approved', decision: { by: 'finance', note: 'ok by finance', arguments_edited: false } });
    expect((await decide(id, fx.keys.ops, { decision: 'deny' })).status).toBe(409);

    const ran = await refund(args);
    expect(ran.body).toMatchObject({ success: true, replayed: false, value: { refunded: 1500.5 } });
    expect(fx.runs.get('payments_refund')).toBe(2);
    const replay = await refund(args);
    expect(replay.body).toMatchObject({ success: true, replayed: true, value: { refunded: 1500.5 } });
    expect(fx.runs.get('payments_refund')).toBe(2);
    expect((await get(app, `/approvals/${id}`, bearer(fx.keys.ops))).body).toMatchObject({ status: 'executed', result: { success: true } });
  });

  it('answers approval_denied with the note, runs nothing, and asks anew on the next identical call', async () => {
    const args = { order: 'o-deny', amount: 5000 };
    const id = (await refund(args)).body.approval.id as string;
    expect((await decide(id, fx.keys.ops, { decision: 'deny', note: 'not this customer' })).body.status).toBe('denied');
    const denied = await refund(args);
    expect(denied.body).toMatchObject({ success: false, error: { code: 'approval_denied' } });
    expect(denied.body.message).toContain('not this customer');
    const anew = await refund(args);
    expect(anew.body.error.code).toBe('approval_required');
    expect(anew.body.approval.id).not.toBe(id);
    expect(fx.last.get('payments_refund')).not.toMatchObject(args);
  });

  it('runs the edited arguments once approved, keeps both, and refuses edits that break the schema with 422', async () => {
    const args = { order: 'o-edit', amount: 2500 };
    const id = (await refund(args)).body.approval.id as string;
    const bad = await decide(id, fx.keys.finance, { decision: 'approve', arguments: { order: 'o-edit', amount: 'lots' } });
    expect(bad.status).toBe(422);
    expect(bad.body.detail).toMatch(/amount/);
    expect((await decide(id, fx.keys.finance, { decision: 'approve', arguments: { order: 'o-edit', amount: 'x' }, extra: 1 })).status).toBe(400);
    expect((await decide(id, fx.keys.finance, { decision: 'maybe' })).status).toBe(400);
    const edited = await decide(id, fx.keys.finance, { decision: 'approve', arguments: { order: 'o-edit', amount: 2000 } });
    expect(edited.body).toMatchObject({ status: 'approved', arguments: { amount: 2000 }, requested_arguments: args, decision: { arguments_edited: true } });
    const ran = await refund(args);
    expect(ran.body).toMatchObject({ success: true, value: { refunded: 2000 } });
    expect(fx.last.get('payments_refund')).toEqual({ order: 'o-edit', amount: 2000 });
  });

  it('lets exactly one of many concurrent decisions win', async () => {
    const id = (await refund({ order: 'o-race', amount: 9000 })).body.approval.id as string;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => decide(id, i % 2 === 0 ? fx.keys.finance : fx.keys.ops, { decision: i % 3 === 0 ? 'deny' : 'approve' })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    expect(answers.filter((a) => a.status === 409)).toHaveLength(7);
  });

  it("treats a tool's own approval: as a rule after the file's and logs each step in the session", async () => {
    const session = `s-${kind}-${Date.now()}`;
    const args = { order: 'letter', amount: 1 };
    const held = await post(app, { name: 'send_letter', arguments: args }, { ...bearer(fx.keys.agent), 'x-session-id': session });
    expect(held.body.approval.status).toBe('pending');
    const record = (await get(app, `/approvals/${held.body.approval.id}`, bearer(fx.keys.finance))).body;
    expect(record).toMatchObject({ rule: null, approvers: ['finance'], session_id: session });
    await decide(held.body.approval.id, fx.keys.finance, { decision: 'approve' });
    const ran = await post(app, { name: 'send_letter', arguments: args }, { ...bearer(fx.keys.agent), 'x-session-id': session });
    expect(ran.body.success).toBe(true);
    const page = await get(app, `/sessions/${session}/events?limit=100`, bearer(fx.keys.agent));
    const types = (page.body.events as { type: string }[]).map((e) => e.type);
    expect(types).toEqual(['ApprovalRequested', 'ToolInvoked', 'ApprovalDecided', 'ToolInvoked']);
  });

  it('with Prefer: respond-async, the task waits in input_required for the decision and then runs by itself (denied: it ends unsuccessful)', async () => {
    const start = async (order: string) => {
      const created = await refund({ order, amount: 7000 }, { prefer: 'respond-async' });
      expect(created.status).toBe(202);
      return created.body.task_id as string;
    };
    const pendingFor = (order: string) =>
      until(`the approval of ${order}`, async () => {
        const listed = await get(app, '/approvals?status=pending', bearer(fx.keys.finance));
        return (listed.body.approvals as { approval_id: string; arguments: { order: string } }[]).find((a) => a.arguments.order === order)?.approval_id;
      });
    const ended = (task: string) =>
      until(`task ${task} to end`, async () => {
        const view = (await get(app, `/tasks/${task}`, bearer(fx.keys.agent))).body;
        return ['working', 'queued', 'input_required'].includes(view.status) ? null : view;
      });
    const before = fx.runs.get('payments_refund') ?? 0;
    const approvedTask = await start('o-task');
    const approvedId = await pendingFor('o-task');
    const waiting = await until('the task waits for the approval', async () => {
      const view = (await get(app, `/tasks/${approvedTask}`, bearer(fx.keys.agent))).body;
      return view.status === 'input_required' ? view : null;
    });
    expect(waiting).toMatchObject({ status: 'input_required', approval: { id: approvedId, url: `/approvals/${approvedId}`, status: 'pending' } });
    await decide(approvedId, fx.keys.finance, { decision: 'approve' });
    expect(await ended(approvedTask)).toMatchObject({ status: 'completed', result: { success: true, value: { refunded: 7000 } } });
    expect(fx.runs.get('payments_refund')).toBe(before + 1);

    const deniedTask = await start('o-task-no');
    await decide(await pendingFor('o-task-no'), fx.keys.finance, { decision: 'deny', note: 'no' });
    expect(await ended(deniedTask)).toMatchObject({ status: 'completed', result: { success: false, error: { code: 'approval_denied' } } });
    expect(fx.runs.get('payments_refund')).toBe(before + 1);
  });

  it('expires an undecided approval: a decision after it is 409 and the call answers approval_expired', async () => {
    const short = await policyFixture([{ tools: ['payments_*'], action: 'approve', ttl_s: 1 }]);
    const other = await makeApp(kind, { env: short.env, register: short.register });
    try {
      const args = { order: 'o-late', amount: 1 };
      const call = () => post(other, { name: 'payments_refund', arguments: args }, bearer(short.keys.agent));
      const id = (await call()).body.approval.id as string;
      let status = 'pending';
      for (let i = 0; i < 60 && status === 'pending'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        status = (await get(other, `/approvals/${id}`, bearer(short.keys.ops))).body.status;
      }
      expect(status).toBe('expired');
      expect((await post(other, { decision: 'approve' }, bearer(short.keys.ops), `/approvals/${id}/decision`)).status).toBe(409);
      expect((await call()).body.error.code).toBe('approval_expired');
      // A task waiting for an approval nobody decides (and nobody reads) ends approval_expired on time.
      const task = (
        await post(other, { name: 'payments_refund', arguments: { order: 'o-late-task', amount: 1 } }, { ...bearer(short.keys.agent), prefer: 'respond-async' })
      ).body.task_id as string;
      const ended = await until('the waiting task ends', async () => {
        const view = (await get(other, `/tasks/${task}`, bearer(short.keys.agent))).body;
        return view.status === 'completed' ? view : null;
      });
      expect(ended.result).toMatchObject({ success: false, error: { code: 'approval_expired' } });
      expect(short.runs.get('payments_refund')).toBeUndefined();
    } finally {
      await other.close();
    }
  });
});

describe('policy at start', () => {
  it('refuses to start with a rule that does not compile, naming it', async () => {
    const fx = await policyFixture([{ action: 'allow' }, { when: 'args.amount > ', action: 'deny' }]);
    await expect(makeApp('memory', { env: fx.env, register: fx.register })).rejects.toThrow(/policy\[1\]: when does not compile/);
  });
});
