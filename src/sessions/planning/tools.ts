/** The planning tool suite (docs/sessions-and-planning.md): a session-scoped plan the model sets up, extends, updates and reads. */
import { error, ok } from '../../tools/define.ts';
import type { SourceRegistry } from '../../tools/registry.ts';
import type { SessionHandle, ToolContext, ToolDefinition, ToolResult } from '../../tools/types.ts';
import { addSteps, MAX_PLAN_STEPS, readPlan, setupPlan, statusOf, updateStep, type Plan, type PlanHead, type PlanStep, type StepStatus } from './plan.ts';

const MAX_STEPS_PER_CALL = 1000;

/** Non-empty (not only blanks), at most 500 characters. */
const text = { type: 'string', minLength: 1, maxLength: 500, pattern: '\\S' };
const titles = { type: 'array', items: text, maxItems: MAX_STEPS_PER_CALL };
const stepStatus = { type: 'string', enum: ['pending', 'in_progress', 'done'] };
const stepSchema = {
  type: 'object',
  properties: { step_id: { type: 'integer', minimum: 1 }, title: { type: 'string' }, status: stepStatus },
  required: ['step_id', 'title', 'status'],
};
export const planSchema = {
  type: 'object',
  properties: { objective: { type: 'string' }, status: { type: 'string', enum: ['active', 'completed'] }, steps: { type: 'array', items: stepSchema } },
  required: ['objective', 'status', 'steps'],
};
const progressProperties = {
  plan_status: { type: 'string', enum: ['active', 'completed'] },
  steps_total: { type: 'integer' },
  steps_done: { type: 'integer' },
};

/** Unreachable through the dispatcher, which runs every session built-in in a session (src/tools/session-handle.ts). */
const NO_SESSION = 'The planning tools keep the plan in a session, and this call has none. Continue without a plan.';

function progressOf(head: PlanHead) {
  return { plan_status: statusOf(head), steps_total: head.steps_total, steps_done: head.steps_done };
}

function summary(head: PlanHead): string {
  return statusOf(head) === 'completed'
    ? `All ${head.steps_total} steps are done: the plan is completed.`
    : `${head.steps_done} of ${head.steps_total} steps done; the plan is active.`;
}

/** Runs a planning handler with the session it needs, or tells the model there is none. */
function withSession<P, V>(run: (params: P, session: SessionHandle) => Promise<ToolResult<V>>) {
  return (params: P, context: ToolContext): Promise<ToolResult<V>> =>
    context.session === null ? Promise.resolve(error(NO_SESSION)) : run(params, context.session);
}

const setupPlanTool: ToolDefinition<{ objective: string; initial_steps?: string[] }, Plan> = {
  name: 'planning_setup_plan',
  description: 'Create the plan for this session, or replace the current one: an objective and optional initial steps (ids start at 1).',
  parameters: { type: 'object', properties: { objective: text, initial_steps: titles }, required: ['objective'] },
  result: planSchema,
  annotations: { read_only: false, destructive: true, idempotent: true, open_world: false },
  examples: [
    {
      description: 'A plan with two steps',
      input: { objective: 'Ship the release', initial_steps: ['Run the tests', 'Tag the commit'] },
      output: {
        objective: 'Ship the release',
        status: 'active',
        steps: [
          { step_id: 1, title: 'Run the tests', status: 'pending' },
          { step_id: 2, title: 'Tag the commit', status: 'pending' },
        ],
      },
    },
  ],
  handler: withSession(async ({ objective, initial_steps = [] }, session) => {
    const { plan, replaced } = await setupPlan(session, objective, initial_steps);
    const count = plan.steps.length;
    const steps = count === 0 ? 'no steps yet: add them with planning_add_step' : `${count} step${count === 1 ? '' : 's'} (ids 1–${count})`;
    return ok(plan, `Plan ${replaced ? 'replaced' : 'created'} with ${steps}. Mark progress with planning_update_step.`);
  }),
};

const addStepTool: ToolDefinition<{ steps: string[] }, { steps: PlanStep[] } & ReturnType<typeof progressOf>> = {
  name: 'planning_add_step',
  description: 'Append one or more steps to the current plan; each gets the next step id.',
  parameters: { type: 'object', properties: { steps: { ...titles, minItems: 1 } }, required: ['steps'] },
  result: { type: 'object', properties: { steps: { type: 'array', items: stepSchema }, ...progressProperties }, required: ['steps'] },
  annotations: { read_only: false, destructive: false, idempotent: false, open_world: false },
  handler: withSession(async ({ steps }, session) => {
    const added = await addSteps(session, steps);
    if (!added.ok) return error(added.reason);
    const ids = added.value.map((s) => s.step_id);
    const named = ids.length === 1 ? `step ${ids[0]}` : `steps ${ids[0]}–${ids.at(-1)}`;
    return ok({ steps: added.value, ...progressOf(added.head) }, `Added ${named}. ${summary(added.head)}`);
  }),
};

const updateStepTool: ToolDefinition<{ step_id: number; title?: string; status?: StepStatus }, { step: PlanStep } & ReturnType<typeof progressOf>> = {
  name: 'planning_update_step',
  description: "Change a step's title and/or status (pending, in_progress, done). The plan is completed when every step is done.",
  parameters: {
    type: 'object',
    properties: { step_id: { type: 'integer', minimum: 1 }, title: text, status: stepStatus },
    required: ['step_id'],
  },
  result: { type: 'object', properties: { step: stepSchema, ...progressProperties }, required: ['step'] },
  annotations: { read_only: false, destructive: false, idempotent: true, open_world: false },
  handler: withSession(async ({ step_id, title, status }, session) => {
    const updated = await updateStep(session, step_id, { ...(title !== undefined && { title }), ...(status !== undefined && { status }) });
    if (!updated.ok) return error(updated.reason);
    return ok({ step: updated.value, ...progressOf(updated.head) }, `Step ${step_id} is ${updated.value.status}. ${summary(updated.head)}`);
  }),
};

const readPlanTool: ToolDefinition<Record<string, never>, Plan> = {
  name: 'planning_read_plan',
  description: 'Return the current plan: its objective, status and every step with its id and status.',
  parameters: { type: 'object', properties: {} },
  result: planSchema,
  annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
  handler: withSession(async (_params, session) => {
    const plan = await readPlan(session);
    if (plan === undefined) return error('No plan yet: call planning_setup_plan first.');
    const done = plan.steps.filter((s) => s.status === 'done').length;
    return ok(plan, `Plan "${plan.objective}" is ${plan.status}: ${done} of ${plan.steps.length} steps done.`);
  }),
};

export const PLANNING_TOOLS = [setupPlanTool, addStepTool, updateStepTool, readPlanTool] as const;
export { MAX_PLAN_STEPS };

export function registerPlanningTools(registry: Pick<SourceRegistry, 'registerSessionTool'>): void {
  for (const tool of PLANNING_TOOLS) registry.registerSessionTool(tool as unknown as ToolDefinition);
}
