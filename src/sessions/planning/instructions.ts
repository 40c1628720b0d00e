/**
 * The system-prompt section for the planning tools (seed: "Planning Strategies"). Every strategy
 * renders the same headings and tool references; only the mindset paragraph differs.
 */
export const STRATEGIES = ['react', 'plan_act_reflect', 'goal_decompose_route_synthesise'] as const;
export type PlanningStrategy = (typeof STRATEGIES)[number];

const MINDSETS: Record<PlanningStrategy, string> = {
  react:
    'Work in short loops: reason briefly about what to do next, make one tool call, read what it returned, and decide again. ' +
    'Let each observation shape the next step, and record what you learn by updating the plan as you go.',
  plan_act_reflect:
    'Plan first: outline the whole plan before acting on any of it. Then carry out the steps in order, and after each one ' +
    'stop to reflect on whether it worked and what it changes; add or retitle steps to record those reflections.',
  goal_decompose_route_synthesise:
    'Start by restating the goal in your own words. Break it into sub-problems before you call any tool, route each ' +
    'sub-problem to the tool or step best suited to it, and finish by synthesising the results into one coherent answer.',
};

export function planningInstructions(strategy: PlanningStrategy): string {
  return `## Planning

### Mindset

${MINDSETS[strategy]}

### Tools

- \`planning_setup_plan\` — set the objective and, optionally, the first steps. Calling it again replaces the plan.
- \`planning_add_step\` — append steps when the work turns out to need more.
- \`planning_update_step\` — mark a step \`in_progress\` when you start it and \`done\` when it is finished, or fix its title.
- \`planning_read_plan\` — read the plan back before deciding what to do next.

### Rules

- Keep one plan per task; replace it only when the objective itself changes.
- Step ids are 1, 2, 3… and are never reused: refer to steps by id.
- Titles are short and concrete (at most 500 characters).
- When every step is \`done\` the plan is completed: then give your final answer.
`;
}
