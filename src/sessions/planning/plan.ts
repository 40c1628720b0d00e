/**
 * The plan kept in a session (docs/sessions-and-planning.md). Stored as a small head plus one key per step, so changing a
 * step reads and writes two keys whatever the plan's length; only reading the whole plan is O(steps).
 */
import type { SessionHandle } from '../../tools/types.ts';

export type StepStatus = 'pending' | 'in_progress' | 'done';
export type PlanStatus = 'active' | 'completed';

export interface PlanStep {
  step_id: number;
  title: string;
  status: StepStatus;
}

export interface Plan {
  objective: string;
  status: PlanStatus;
  steps: PlanStep[];
}

/** Steps are never removed from a plan, so ids 1 … next_step_id - 1 all exist. */
export interface PlanHead {
  objective: string;
  next_step_id: number;
  steps_total: number;
  steps_done: number;
}

export const MAX_PLAN_STEPS = 10_000;
export const HEAD_KEY = 'planning.plan';
export const stepKey = (stepId: number): string => `planning.step.${stepId}`;

export function statusOf(head: PlanHead): PlanStatus {
  return head.steps_total > 0 && head.steps_done === head.steps_total ? 'completed' : 'active';
}

function stepIds(head: PlanHead): number[] {
  return Array.from({ length: head.next_step_id - 1 }, (_, i) => i + 1);
}

export async function readPlan(session: Pick<SessionHandle, 'get' | 'getMany'>): Promise<Plan | undefined> {
  const head = await session.get<PlanHead>(HEAD_KEY);
  if (head === undefined) return undefined;
  const steps = (await session.getMany<PlanStep>(stepIds(head).map(stepKey))).filter((s) => s !== undefined);
  // Status from the steps shown, so the answer is consistent with itself.
  const completed = steps.length > 0 && steps.every((s) => s.status === 'done');
  return { objective: head.objective, status: completed ? 'completed' : 'active', steps };
}

/** Creates the plan, or replaces it (removing the old steps); step ids start again at 1. */
export async function setupPlan(session: SessionHandle, objective: string, titles: readonly string[]): Promise<{ plan: Plan; replaced: boolean }> {
  const old = await session.get<PlanHead>(HEAD_KEY);
  if (old !== undefined) for (const id of stepIds(old)) await session.delete(stepKey(id));
  const steps = titles.map((title, i): PlanStep => ({ step_id: i + 1, title, status: 'pending' }));
  for (const step of steps) await session.set(stepKey(step.step_id), step);
  const head: PlanHead = { objective, next_step_id: steps.length + 1, steps_total: steps.length, steps_done: 0 };
  await session.set(HEAD_KEY, head);
  return { plan: { objective, status: statusOf(head), steps }, replaced: old !== undefined };
}

export type PlanChange<T> = { ok: true; value: T; head: PlanHead } | { ok: false; reason: string };

const NO_PLAN = 'No plan yet: call planning_setup_plan first.';

export async function addSteps(session: SessionHandle, titles: readonly string[]): Promise<PlanChange<PlanStep[]>> {
  const head = await session.get<PlanHead>(HEAD_KEY);
  if (head === undefined) return { ok: false, reason: NO_PLAN };
  if (head.steps_total + titles.length > MAX_PLAN_STEPS) {
    return {
      ok: false,
      reason: `The plan would have ${head.steps_total + titles.length} steps, more than the limit of ${MAX_PLAN_STEPS}. Replace it with a shorter plan (planning_setup_plan) instead.`,
    };
  }
  const steps = titles.map((title, i): PlanStep => ({ step_id: head.next_step_id + i, title, status: 'pending' }));
  for (const step of steps) await session.set(stepKey(step.step_id), step);
  const next: PlanHead = { ...head, next_step_id: head.next_step_id + steps.length, steps_total: head.steps_total + steps.length };
  await session.set(HEAD_KEY, next);
  return { ok: true, value: steps, head: next };
}

export async function updateStep(session: SessionHandle, stepId: number, change: { title?: string; status?: StepStatus }): Promise<PlanChange<PlanStep>> {
  const [headRead, stepRead] = await session.getMany([HEAD_KEY, stepKey(stepId)]);
  const head = headRead as PlanHead | undefined;
  const step = stepRead as PlanStep | undefined;
  if (head === undefined) return { ok: false, reason: NO_PLAN };
  if (step === undefined) {
    const known = head.steps_total === 0 ? 'the plan has no steps yet: add some with planning_add_step' : `its steps are 1–${head.next_step_id - 1}`;
    return { ok: false, reason: `No step ${stepId} in the plan: ${known}. Call planning_read_plan to see the plan.` };
  }
  if (change.title === undefined && change.status === undefined) {
    return { ok: false, reason: 'Nothing to change: give step_id with a new title, a status (pending, in_progress, done), or both.' };
  }
  const updated: PlanStep = { step_id: stepId, title: change.title ?? step.title, status: change.status ?? step.status };
  await session.set(stepKey(stepId), updated);
  const doneDelta = Number(updated.status === 'done') - Number(step.status === 'done');
  let next: PlanHead = head;
  if (doneDelta !== 0) {
    next = { ...head, steps_done: head.steps_done + doneDelta };
    await session.set(HEAD_KEY, next);
  }
  return { ok: true, value: updated, head: next };
}
