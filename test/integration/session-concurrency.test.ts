/**
 * Lossless concurrency (docs/sessions-and-planning.md): many calls on one session, on one app or on two replicas sharing
 * one Redis, lose no write. Commits compare the versions the handler read; a conflict re-runs it.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post, sessionEvents } from '../helpers/app.ts';

const CALLS = 64;

describe('concurrent writes to one session', () => {
  const replicas: FastifyInstance[] = [];
  let memory: FastifyInstance;
  beforeAll(async () => {
    const shared = { KEY_PREFIX: `conc-${randomUUID().slice(0, 8)}:` };
    replicas.push(await makeApp('redis', { env: shared }), await makeApp('redis', { env: shared }));
    memory = await makeApp('memory');
  });
  afterAll(async () => {
    await Promise.all([...replicas, memory].map((app) => app.close()));
  });

  async function addStepsConcurrently(apps: FastifyInstance[], session: string) {
    const headers = { 'x-session-id': session };
    await post(apps[0]!, { name: 'planning_setup_plan', arguments: { objective: 'race' } }, headers);
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: CALLS }, (_, i) => post(apps[i % apps.length]!, { name: 'planning_add_step', arguments: { steps: [`step ${i}`] } }, headers)),
    );
    const elapsedMs = performance.now() - started;
    const plan = (await post(apps[1 % apps.length]!, { name: 'planning_read_plan', arguments: {} }, headers)).body.value;
    return { results: results.map((r) => r.body), plan, elapsedMs };
  }

  function expectEveryStepOnce(results: Record<string, any>[], plan: { steps: { step_id: number; title: string }[] }) {
    expect(results.every((r) => r.success)).toBe(true);
    expect(plan.steps).toHaveLength(CALLS);
    expect(plan.steps.map((s) => s.step_id)).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
    expect(new Set(plan.steps.map((s) => s.title))).toEqual(new Set(Array.from({ length: CALLS }, (_, i) => `step ${i}`)));
    // What each call was told matches the plan: its step is stored under the id it answered.
    const byId = new Map(plan.steps.map((s) => [s.step_id, s.title]));
    for (const r of results) expect(byId.get(r.value.steps[0].step_id)).toBe(r.value.steps[0].title);
  }

  it(`keeps every step of ${CALLS} concurrent planning_add_step calls split across two replicas on one Redis`, async () => {
    const { results, plan } = await addStepsConcurrently(replicas, `race-${randomUUID()}`);
    expectEveryStepOnce(results, plan);
  });

  it(`keeps every step of ${CALLS} concurrent planning_add_step calls on the memory store`, async () => {
    const { results, plan } = await addStepsConcurrently([memory], `race-${randomUUID()}`);
    expectEveryStepOnce(results, plan);
  });

  it('counts every increment of a read-modify-write tool run concurrently on both replicas', async () => {
    const headers = { 'x-session-id': `count-${randomUUID()}` };
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => post(replicas[i % 2]!, { name: 'counter', arguments: {} }, headers)));
    expect(results.map((r) => r.body.value.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect((await post(replicas[0]!, { name: 'counter', arguments: {} }, headers)).body.value).toEqual({ count: 41 });
  });

  it('gives up after 32 conflicting attempts with handler_error, writing nothing of its own', async () => {
    const headers = { 'x-session-id': `conflict-${randomUUID()}` };
    const result = (await post(memory, { name: 'conflicts', arguments: {} }, headers)).body;
    expect(result).toMatchObject({ success: false, error: { code: 'handler_error' } });
    expect(result.message).toMatch(/other calls kept changing the same session state \(32 attempts\)/);
    // Each attempt ran its nested call, which committed on its own: the handler ran 32 times.
    expect((await post(memory, { name: 'counter', arguments: {} }, headers)).body.value).toEqual({ count: 33 });
    const events = await sessionEvents(memory, headers['x-session-id']);
    expect(events.filter((e) => e.tool === 'conflicts').map((e) => e.error_code)).toEqual(['handler_error']);
  });

  it('answers every concurrent read-only call with the whole plan', async () => {
    const headers = { 'x-session-id': `read-${randomUUID()}` };
    await post(replicas[0]!, { name: 'planning_setup_plan', arguments: { objective: 'o', initial_steps: ['a', 'b'] } }, headers);
    const reads = await Promise.all(Array.from({ length: 20 }, (_, i) => post(replicas[i % 2]!, { name: 'planning_read_plan', arguments: {} }, headers)));
    expect(reads.every((r) => r.body.success && r.body.value.steps.length === 2)).toBe(true);
  });
});
