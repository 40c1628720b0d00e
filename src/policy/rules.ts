/**
 * Policy rules (docs/approvals.md): `policy:` in the tools file, then each tool's `approval:` as an `approve`
 * rule after them. Every `when` is compiled once here, with the variables it may name declared, so
 * a typo or an unknown variable stops the start naming `policy[<i>]`.
 */
import { Environment } from '@marcbachmann/cel-js';
import picomatch from 'picomatch';
import { ConfigError } from '../errors.ts';
import { isObject } from '../json.ts';

/** One rule as written in the file: its place (`policy[2]`) and value. */
export interface RawRule {
  readonly where: string;
  readonly value: unknown;
}
import { approvers, ttl } from '../tools/approval.ts';
import type { SourceKind } from '../tools/source.ts';

export type PolicyAction = 'allow' | 'deny' | 'approve';

/** The variables a condition sees. */
export interface PolicyInput {
  args: Record<string, unknown>;
  /** `source`: its kind (`builtin`, `plugin`, `http`, `openapi`, `mcp`) and name, as GET /sources shows them. */
  tool: { name: string; hash: string; source: { kind: SourceKind; name: string }; annotations: Record<string, boolean> };
  caller: { id: string | null; user: string | null; groups: readonly string[]; scopes: readonly string[]; admin: boolean };
  session: string | null;
}

export interface PolicyRule {
  /** Position in `policy:` from 0; a tool's own `approval:` has null. */
  readonly index: number | null;
  readonly action: PolicyAction;
  readonly matchesTool: (name: string) => boolean;
  /** Null: no condition. A condition that fails to evaluate (a missing field) does not match. */
  readonly when: ((input: PolicyInput) => unknown) | null;
  readonly approvers: readonly string[];
  /** Null: APPROVAL_TTL_S. */
  readonly ttlS: number | null;
  readonly reason: string | null;
}

const RULE_KEYS = ['tools', 'when', 'action', 'approvers', 'ttl_s', 'reason'];
const ACTIONS: readonly PolicyAction[] = ['allow', 'deny', 'approve'];
/** One environment for every rule: the four variables, maps of dynamic values (a JSON number is a double). */
function celEnvironment(): Environment {
  return new Environment().registerVariable('args', 'map').registerVariable('tool', 'map').registerVariable('caller', 'map').registerVariable('session', 'dyn');
}

function compileWhen(env: Environment, source: string, fail: (problem: string) => never): (input: PolicyInput) => unknown {
  let program: ReturnType<Environment['parse']>;
  try {
    program = env.parse(source);
  } catch (err) {
    return fail(`when does not compile: ${firstLine(err)}`);
  }
  const checked = program.check();
  if (!checked.valid) fail(`when does not compile: ${firstLine(checked.error)}`);
  if (checked.type !== 'bool' && checked.type !== 'dyn') fail(`when must be true or false, not ${checked.type}`);
  return (input) => program(input as unknown as Record<string, unknown>);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
}

function compileRule(file: string, entry: RawRule, index: number, env: Environment): PolicyRule {
  const fail = (problem: string): never => {
    throw new ConfigError(`TOOLS_FILE ${file}: policy[${index}]: ${problem}`);
  };
  const value = entry.value;
  if (!isObject(value)) return fail('must be a mapping (an object)');
  const unknown = Object.keys(value).find((k) => !RULE_KEYS.includes(k));
  if (unknown !== undefined) fail(`unknown key "${unknown}" (allowed: ${RULE_KEYS.join(', ')})`);
  const action = value.action as PolicyAction;
  if (!ACTIONS.includes(action)) fail(`action must be one of ${ACTIONS.join(', ')}`);
  const tools = value.tools ?? ['*'];
  if (!Array.isArray(tools) || tools.length === 0 || !tools.every((t) => typeof t === 'string' && t !== ''))
    fail('tools must be a non-empty list of tool-name globs');
  if (value.when !== undefined && (typeof value.when !== 'string' || value.when.trim() === '')) fail('when must be a CEL expression (a string)');
  if (value.reason !== undefined && (typeof value.reason !== 'string' || value.reason === '')) fail('reason must be a non-empty string');
  if (action !== 'approve' && (value.approvers !== undefined || value.ttl_s !== undefined)) fail('approvers and ttl_s belong to action: approve');
  return Object.freeze({
    index,
    action,
    matchesTool: picomatch(tools as string[]),
    when: typeof value.when === 'string' ? compileWhen(env, value.when, fail) : null,
    approvers: approvers(value.approvers, fail),
    ttlS: ttl(value.ttl_s, fail),
    reason: (value.reason as string | undefined) ?? null,
  });
}

/** Compiles the file's `policy:` entries in order; throws ToolsFileError naming the first bad rule. */
export function compileRules(file: string, entries: readonly RawRule[]): PolicyRule[] {
  const env = celEnvironment();
  return entries.map((entry, index) => compileRule(file, entry, index, env));
}

/** The problem of every bad rule, one line each, not only the first (`toolport check`). */
export function ruleProblems(file: string, entries: readonly RawRule[]): string[] {
  const env = celEnvironment();
  return entries.flatMap((entry, index) => {
    try {
      compileRule(file, entry, index, env);
      return [];
    } catch (err) {
      return [firstLine(err)];
    }
  });
}
