/**
 * An approval across replicas on one real Redis: a task held for an approval on a replica that is
 * then killed (kill -9) runs, once approved on another replica, exactly once on a survivor; later
 * identical calls replay its result.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isRunning, stopAll, type Child } from '../../support/children.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { startReplica } from '../helpers/replicas.ts';
import { until } from '../helpers/tasks.ts';

const PLUGIN = 'test/fixtures/approval-plugin.ts';

describe('an approval whose replica is killed before the approved call runs (redis)', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'approval-replicas-'));
  const marks = path.join(dir, 'runs');
  const tools = path.join(dir, 'tools.yaml');
  const env = { KEY_PREFIX: `approval-replicas-${randomUUID().slice(0, 8)}:`, TOOLS_FILE: tools, TOOL_PLUGINS: PLUGIN, TASK_LEASE_MS: '1000' };
  let doomed: { child: Child; port: number };
  let b: FastifyInstance;
  let d: FastifyInstance;

  /** The runs noted for `tag`, as [tag, pid] lines, by every process. */
  const runsOf = (tag: string) =>
    existsSync(marks)
      ? readFileSync(marks, 'utf8')
          .split('\n')
          .filter((line) => line.startsWith(`${tag} `))
      : [];

  beforeAll(async () => {
    writeFileSync(
      tools,
      stringify({
        policy: [
          { tools: ['approved_payment'], action: 'approve' },
          { tools: ['approved_refund'], action: 'approve', ttl_s: 2 },
        ],
      }),
    );
    writeFileSync(marks, '');
    process.env.APPROVAL_TEST_MARKS = marks;
    const starting = startReplica('toolport replica (to be killed)', { ...env, APPROVAL_TEST_MARKS: marks });
    [b, d] = await Promise.all([makeApp('redis', { env }), makeApp('redis', { env })]);
    const { child, port } = await starting;
    doomed = { child, port };
  }, 120_000);
  afterAll(async () => {
    await Promise.all([b?.close(), d?.close(), stopAll()]);
  });

  it('runs the approved task exactly once on a survivor, replays it to an identical call, and expires the other on time', async () => {
    const tag = `pay-${randomUUID()}`;
    const startTask = async (name: string, arg: string) => {
      const response = await fetch(`http://127.0.0.1:${doomed.port}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', prefer: 'respond-async' },
        body: JSON.stringify({ name, arguments: { tag: arg } }),
      });
      expect(response.status).toBe(202);
      return ((await response.json()) as { task_id: string }).task_id;
    };
    const task = await startTask('approved_payment', tag);
    // An approval nobody decides, made by the replica about to die: it expires on time all the same.
    const refundTag = `refund-${randomUUID()}`;
    const refundAsked = Date.now();
    const refund = await startTask('approved_refund', refundTag);
    const held = await until('the task waits for its approval', async () => {
      const view = (await get(b, `/tasks/${task}`)).body;
      return view.status === 'input_required' ? view : null;
    });
    const approval = held.approval.id as string;

    doomed.child.proc.kill('SIGKILL');
    await until('the replica exits', () => !isRunning(doomed.child), 30_000);
    expect((await post(b, { decision: 'approve' }, {}, `/approvals/${approval}/decision`)).status).toBe(200);

    const done = await until('the task ends on a survivor', async () => {
      const view = (await get(d, `/tasks/${task}`)).body;
      return view.status === 'completed' || view.status === 'failed' ? view : null;
    });
    expect(done).toMatchObject({ status: 'completed', result: { success: true, value: { tag } } });
    expect(runsOf(tag)).toEqual([`${tag} ${process.pid}`]);
    expect((await get(b, `/approvals/${approval}`)).body.status).toBe('executed');

    const replay = await post(d, { name: 'approved_payment', arguments: { tag } });
    expect(replay.body).toMatchObject({ success: true, replayed: true, value: { tag } });
    expect(runsOf(tag)).toHaveLength(1);

    // Nobody read the refund's approval: a survivor's sweep recorded its expiry and resumed its task.
    const expired = await until('the refund task ends', async () => {
      const view = (await get(b, `/tasks/${refund}`)).body;
      return view.status === 'failed' || view.status === 'completed' ? { view, at: Date.now() } : null;
    });
    expect(expired.view).toMatchObject({ status: 'completed', result: { success: false, error: { code: 'approval_expired' } } });
    expect(expired.at - refundAsked).toBeLessThan(2000 + 3000);
    expect(runsOf(refundTag)).toEqual([]);
  });
});
