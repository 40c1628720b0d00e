/** The planning tool suite (docs/sessions-and-planning.md) through the real HTTP app, on both stores. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post, STORES } from '../helpers/app.ts';

describe.each(STORES)('planning tools (%s store)', (store) => {
  let app: FastifyInstance;
  let n = 0;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());

  /** A fresh session per test, and a call helper bound to it. */
  const session = () => {
    const id = `plan-${store}-${++n}`;
    const call = async (name: string, args: Record<string, unknown> = {}) => (await post(app, { name, arguments: args }, { 'x-session-id': id })).body;
    return { id, call };
  };

  it('creates a plan whose steps are numbered from 1, and reads it back', async () => {
    const { call } = session();
    const created = await call('planning_setup_plan', { objective: 'Ship it', initial_steps: ['test', 'tag'] });
    expect(created).toMatchObject({ success: true, error: null });
    expect(created.value).toEqual({
      objective: 'Ship it',
      status: 'active',
      steps: [
        { step_id: 1, title: 'test', status: 'pending' },
        { step_id: 2, title: 'tag', status: 'pending' },
      ],
    });
    expect((await call('planning_read_plan')).value).toEqual(created.value);
  });

  it('appends steps with the next ids, and never reuses an id within a plan', async () => {
    const { call } = session();
    await call('planning_setup_plan', { objective: 'o', initial_steps: ['a'] });
    const added = await call('planning_add_step', { steps: ['b', 'c'] });
    expect(added.value).toMatchObject({
      steps: [
        { step_id: 2, title: 'b' },
        { step_id: 3, title: 'c' },
      ],
      steps_total: 3,
      steps_done: 0,
      plan_status: 'active',
    });
    expect(added.message).toMatch(/Added steps 2–3/);
    await call('planning_update_step', { step_id: 3, title: 'c2' });
    expect((await call('planning_add_step', { steps: ['d'] })).value.steps).toEqual([{ step_id: 4, title: 'd', status: 'pending' }]);
    expect((await call('planning_read_plan')).value.steps.map((s: { step_id: number }) => s.step_id)).toEqual([1, 2, 3, 4]);
  });

  it('replaces the plan on a second setup: old steps gone, ids start again at 1', async () => {
    const { call } = session();
    await call('planning_setup_plan', { objective: 'first', initial_steps: ['a', 'b', 'c'] });
    const replaced = await call('planning_setup_plan', { objective: 'second', initial_steps: ['x'] });
    expect(replaced.message).toMatch(/replaced/);
    expect((await call('planning_read_plan')).value).toEqual({ objective: 'second', status: 'active', steps: [{ step_id: 1, title: 'x', status: 'pending' }] });
    expect((await call('planning_update_step', { step_id: 2, status: 'done' })).error.code).toBe('tool_failed');
  });

  it('changes a title and a status, and completes the plan when every step is done', async () => {
    const { call } = session();
    await call('planning_setup_plan', { objective: 'o', initial_steps: ['a', 'b'] });
    const renamed = await call('planning_update_step', { step_id: 1, title: 'a2', status: 'in_progress' });
    expect(renamed.value).toEqual({ step: { step_id: 1, title: 'a2', status: 'in_progress' }, plan_status: 'active', steps_total: 2, steps_done: 0 });
    await call('planning_update_step', { step_id: 1, status: 'done' });
    const last = await call('planning_update_step', { step_id: 2, status: 'done' });
    expect(last.value).toMatchObject({ plan_status: 'completed', steps_done: 2 });
    expect(last.message).toMatch(/completed/);
    expect((await call('planning_read_plan')).value.status).toBe('completed');
    // Reopening a step, or adding one, makes the plan active again.
    expect((await call('planning_update_step', { step_id: 2, status: 'pending' })).value.plan_status).toBe('active');
    await call('planning_update_step', { step_id: 2, status: 'done' });
    expect((await call('planning_add_step', { steps: ['c'] })).value.plan_status).toBe('active');
    expect((await call('planning_read_plan')).value.status).toBe('active');
  });

  it('tells the model to set up a plan first when there is none', async () => {
    const { call } = session();
    for (const [name, args] of [
      ['planning_add_step', { steps: ['a'] }],
      ['planning_update_step', { step_id: 1, status: 'done' }],
      ['planning_read_plan', {}],
    ] as const) {
      const result = await call(name, args);
      expect(result).toMatchObject({ success: false, error: { code: 'tool_failed' } });
      expect(result.message).toBe('No plan yet: call planning_setup_plan first.');
    }
  });

  it('names the existing steps when the step does not exist, and asks for a change when none is given', async () => {
    const { call } = session();
    await call('planning_setup_plan', { objective: 'o', initial_steps: ['a', 'b'] });
    const missing = await call('planning_update_step', { step_id: 7, status: 'done' });
    expect(missing).toMatchObject({ success: false, error: { code: 'tool_failed' } });
    expect(missing.message).toMatch(/No step 7 .*1–2.*planning_read_plan/);
    const nothing = await call('planning_update_step', { step_id: 1 });
    expect(nothing.message).toMatch(/Nothing to change/);
    expect((await call('planning_read_plan')).value.steps).toEqual([
      { step_id: 1, title: 'a', status: 'pending' },
      { step_id: 2, title: 'b', status: 'pending' },
    ]);
  });

  it('takes a 500-character title and refuses a 501-character, empty or blank one', async () => {
    const { call } = session();
    const ok = await call('planning_setup_plan', { objective: 'o'.repeat(500), initial_steps: ['t'.repeat(500)] });
    expect(ok.success).toBe(true);
    for (const args of [{ objective: 'o'.repeat(501) }, { objective: '' }, { objective: '   ' }, { objective: 'o', initial_steps: ['t'.repeat(501)] }]) {
      const refused = await call('planning_setup_plan', args);
      expect(refused.error.code).toBe('invalid_arguments');
    }
    expect((await call('planning_add_step', { steps: ['s'.repeat(501)] })).error.code).toBe('invalid_arguments');
    expect((await call('planning_add_step', { steps: [] })).error.code).toBe('invalid_arguments');
    expect((await call('planning_update_step', { step_id: 1, title: 'u'.repeat(501) })).error.code).toBe('invalid_arguments');
    expect((await call('planning_update_step', { step_id: 1, status: 'finished' })).error.code).toBe('invalid_arguments');
    // Nothing refused reached the plan.
    expect((await call('planning_read_plan')).value).toEqual({
      objective: 'o'.repeat(500),
      status: 'active',
      steps: [{ step_id: 1, title: 't'.repeat(500), status: 'pending' }],
    });
  });

  it('starts a new session for a call that names none, and tells the model its id', async () => {
    const result = (await post(app, { name: 'planning_setup_plan', arguments: { objective: 'o' } })).body;
    expect(result).toMatchObject({ success: true, value: { objective: 'o', session_id: expect.stringMatching(/^[0-9a-f-]{36}$/) } });
    const id = result.value.session_id as string;
    expect(result.message).toContain(`pass "session_id": "${id}"`);
    expect((await get(app, `/sessions/${id}/plan`)).body).toEqual({ objective: 'o', status: 'active', steps: [] });
  });

  it('serves the plan at GET /sessions/{id}/plan, 404 without one, 400 for a bad id', async () => {
    const { id, call } = session();
    expect((await get(app, `/sessions/${id}/plan`)).status).toBe(404);
    await call('planning_setup_plan', { objective: 'o', initial_steps: ['a'] });
    const plan = await get(app, `/sessions/${id}/plan`);
    expect(plan.status).toBe(200);
    expect(plan.body).toEqual((await call('planning_read_plan')).value);
    const bad = await get(app, '/sessions/bad%20id/plan');
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  it('removes the plan and the events with DELETE /sessions/{id}', async () => {
    const { id, call } = session();
    await call('planning_setup_plan', { objective: 'o' });
    expect((await app.inject({ method: 'DELETE', url: `/sessions/${id}` })).statusCode).toBe(204);
    expect((await get(app, `/sessions/${id}/plan`)).status).toBe(404);
    expect((await get(app, `/sessions/${id}/events`)).body).toMatchObject({ events: [], total: 0, next_after: null });
    expect((await app.inject({ method: 'DELETE', url: `/sessions/${id}` })).statusCode).toBe(204);
    expect((await call('planning_read_plan')).message).toMatch(/No plan yet/);
  });
});

describe('planning instructions', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory');
  });
  afterAll(() => app.close());

  const headings = (markdown: string) => markdown.split('\n').filter((line) => line.startsWith('#'));
  const tools = (markdown: string) => [...markdown.matchAll(/`(planning_[a-z_]+)`/g)].map((m) => m[1]);

  it('renders the same headings and tool references for every strategy; only the mindset differs', async () => {
    const texts = await Promise.all(
      ['react', 'plan_act_reflect', 'goal_decompose_route_synthesise'].map(async (strategy) => {
        const response = await get(app, `/planning/instructions?strategy=${strategy}`);
        expect(response.status).toBe(200);
        expect(response.headers['content-type']).toMatch(/^text\/markdown/);
        return response.text;
      }),
    );
    const [react, par, gdrs] = texts as [string, string, string];
    expect(headings(react)).toEqual(['## Planning', '### Mindset', '### Tools', '### Rules']);
    for (const text of [par, gdrs]) {
      expect(headings(text)).toEqual(headings(react));
      expect(tools(text)).toEqual(tools(react));
    }
    expect(tools(react)).toEqual(['planning_setup_plan', 'planning_add_step', 'planning_update_step', 'planning_read_plan']);
    const mindset = (text: string) => text.split('### Mindset')[1]!.split('### Tools')[0];
    const withoutMindset = (text: string) => text.replace(mindset(text)!, '');
    expect(new Set(texts.map(mindset)).size).toBe(3);
    expect(new Set(texts.map(withoutMindset)).size).toBe(1);
    expect(mindset(gdrs)).toMatch(/restating the goal/);
  });

  it('defaults to react and refuses an unknown strategy with a problem', async () => {
    expect((await get(app, '/planning/instructions')).text).toBe((await get(app, '/planning/instructions?strategy=react')).text);
    const bad = await get(app, '/planning/instructions?strategy=yolo');
    expect(bad.status).toBe(400);
    expect(bad.headers['content-type']).toMatch(/application\/problem\+json/);
  });
});
