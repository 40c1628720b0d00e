/**
 * The policy stage (docs/approvals.md): after validation, before the ledger. The first rule that matches
 * decides: allow runs the call, deny answers `policy_denied`, approve hands it to the approvals.
 * A call no rule matches runs. Only built when there are rules (or a tool with `approval:`).
 */
import { failure, type InvocationResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import { deepFreeze } from '../json.ts';
import type { Next, PipelineCall, Stage } from '../tools/pipeline/index.ts';
import type { Approvals, HeldCall } from './approvals.ts';
import type { Principal } from '../callers/principal.ts';
import type { PolicyInput, PolicyRule } from './rules.ts';
import type { ToolApproval } from '../tools/approval.ts';

const NO_ANNOTATIONS = Object.freeze({});
const NO_CALLER: PolicyInput['caller'] = Object.freeze({ id: null, user: null, groups: Object.freeze([]), scopes: Object.freeze([]), admin: false });

export class PolicyGate implements Stage {
  readonly name = 'policy';
  readonly #rules: readonly PolicyRule[];
  readonly #approvals: Approvals;
  /** The `tool` variable and the tool's own approval rule, made once per registered tool. */
  readonly #tools = new WeakMap<RegisteredTool, { input: PolicyInput['tool']; own: PolicyRule | null }>();

  constructor(rules: readonly PolicyRule[], approvals: Approvals) {
    this.#rules = rules;
    this.#approvals = approvals;
  }

  get approvals(): Approvals {
    return this.#approvals;
  }

  #tool(tool: RegisteredTool): { input: PolicyInput['tool']; own: PolicyRule | null } {
    let known = this.#tools.get(tool);
    if (known === undefined) {
      const source = Object.freeze({ kind: tool.source.kind, name: tool.source.name });
      const input = Object.freeze({ name: tool.name, hash: tool.hash, source, annotations: tool.annotations ?? NO_ANNOTATIONS });
      known = { input, own: tool.approval === null ? null : toolApprovalRule(tool.name, tool.approval) };
      this.#tools.set(tool, known);
    }
    return known;
  }

  /** The rule that decides the call, or null (no rule matches: it runs). */
  match(
    tool: RegisteredTool,
    params: Readonly<Record<string, unknown>>,
    principal: Principal | null,
    caller: string | null,
    sessionId: string | null,
  ): PolicyRule | null {
    const known = this.#tool(tool);
    let input: PolicyInput | null = null;
    for (const rule of this.#rules) {
      if (!rule.matchesTool(tool.name)) continue;
      if (rule.when === null) return rule;
      input ??= { args: params, tool: known.input, caller: principal ?? (caller === null ? NO_CALLER : { ...NO_CALLER, id: caller }), session: sessionId };
      if (evaluates(rule, input)) return rule;
    }
    return known.own;
  }

  run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    const { tool, params, scope, identity } = call;
    const rule = this.match(tool, params, scope.caller.principal, scope.caller.id, scope.sinks.sessionId);
    if (rule === null) return next();
    call.rule = rule.index === null ? 'approval' : `policy[${rule.index}]`;
    if (rule.action === 'allow') return next();
    if (rule.action === 'deny') {
      scope.sinks.log.info({ event: 'PolicyDenied', tool: tool.name, callId: identity.id, rule: rule.index }, 'call denied by policy');
      const reason = rule.reason ?? `Policy does not allow this call to tool "${tool.name}".`;
      return Promise.resolve(failure(identity, 'policy_denied', reason, `policy[${rule.index}] denies it`));
    }
    const held: HeldCall = {
      tool,
      params,
      identity,
      caller: scope.caller.id,
      principal: scope.caller.principal,
      sessionId: scope.sinks.sessionId,
      budgetMs: call.budgetMs,
      log: scope.sinks.log,
      rule,
      ...(scope.options.taskId !== undefined && { task: { answers: scope.options.inputResponses } }),
    };
    // An approver's edit replaces the arguments the rest of the pipeline runs with.
    return this.#approvals.gate(held, (approved) => {
      if (approved !== params) call.params = deepFreeze(approved) as Readonly<Record<string, unknown>>;
      return next();
    });
  }
}

/** A condition that fails to evaluate (a missing field, a type mismatch) does not match. */
function evaluates(rule: PolicyRule, input: PolicyInput): boolean {
  try {
    return rule.when!(input) === true;
  } catch {
    return false;
  }
}

/** The rule a tool's own `approval:` stands for (after every rule of the file). */
function toolApprovalRule(name: string, approval: ToolApproval): PolicyRule {
  return {
    index: null,
    action: 'approve',
    matchesTool: (other) => other === name,
    when: null,
    approvers: approval.approvers,
    ttlS: approval.ttlS,
    reason: null,
  };
}
