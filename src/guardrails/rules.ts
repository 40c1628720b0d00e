/**
 * `guardrails:` of the tools file (docs/guardrails.md), compiled once at start: each rule's tool
 * globs, pattern (a built-in name or a regular expression), where it applies and its action. A bad
 * rule stops the start naming `guardrails[<i>]`; a plugin's guardrails (defineGuardrail) join them.
 */
import picomatch from 'picomatch';
import { ConfigError } from '../errors.ts';
import { isObject } from '../json.ts';
import type { GuardrailDefinition } from '../tools/guardrail.ts';
import { BUILTIN_PATTERNS, type Pattern } from './patterns.ts';

export type GuardAction = 'redact' | 'deny' | 'flag';
export type GuardWhere = 'input' | 'output';

/** A `guardrails:` rule, compiled. */
export interface PatternGuard {
  readonly kind: 'pattern';
  readonly name: string;
  readonly matchesTool: (name: string) => boolean;
  readonly pattern: Pattern;
  readonly action: GuardAction;
  readonly input: boolean;
  readonly output: boolean;
  readonly replacement: string;
  readonly reason: string | null;
}

/** A plugin's guardrail, with its tool globs compiled. */
export interface PluginGuard {
  readonly kind: 'plugin';
  readonly name: string;
  readonly matchesTool: (name: string) => boolean;
  readonly definition: GuardrailDefinition;
}

export type Guard = PatternGuard | PluginGuard;

/** One rule as written in the file: its place (`guardrails[2]`) and value. */
export interface RawGuardRule {
  readonly where: string;
  readonly value: unknown;
}

const RULE_KEYS = ['name', 'tools', 'pattern', 'action', 'on', 'replacement', 'reason'];
const ACTIONS: readonly GuardAction[] = ['redact', 'deny', 'flag'];
const NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
const every = () => true;

function toolMatcher(tools: unknown, fail: (problem: string) => never): (name: string) => boolean {
  if (tools === undefined) return every;
  if (!Array.isArray(tools) || tools.length === 0 || !tools.every((t) => typeof t === 'string' && t !== ''))
    return fail('tools must be a non-empty list of tool-name globs');
  return picomatch(tools as string[]);
}

function patternOf(value: unknown, fail: (problem: string) => never): { pattern: Pattern; builtin: string | null } {
  if (typeof value !== 'string' || value === '')
    return fail(`pattern must be a built-in (${Object.keys(BUILTIN_PATTERNS).join(', ')}) or a regular expression`);
  const builtin = BUILTIN_PATTERNS[value];
  if (builtin !== undefined) return { pattern: builtin, builtin: value };
  try {
    return { pattern: { regex: new RegExp(value, 'g') }, builtin: null };
  } catch (err) {
    return fail(`pattern is neither a built-in nor a valid regular expression: ${(err as Error).message}`);
  }
}

function whereOf(value: unknown, fail: (problem: string) => never): { input: boolean; output: boolean } {
  const list = value === undefined ? ['input', 'output'] : typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || list.length === 0 || !list.every((w) => w === 'input' || w === 'output'))
    return fail('on must be input, output, or a list of both');
  return { input: list.includes('input'), output: list.includes('output') };
}

function compileRule(file: string, entry: RawGuardRule, index: number): PatternGuard {
  const fail = (problem: string): never => {
    throw new ConfigError(`TOOLS_FILE ${file}: guardrails[${index}]: ${problem}`);
  };
  const value = entry.value;
  if (!isObject(value)) return fail('must be a mapping (an object)');
  const unknown = Object.keys(value).find((k) => !RULE_KEYS.includes(k));
  if (unknown !== undefined) fail(`unknown key "${unknown}" (allowed: ${RULE_KEYS.join(', ')})`);
  const action = value.action as GuardAction;
  if (!ACTIONS.includes(action)) fail(`action must be one of ${ACTIONS.join(', ')}`);
  const { pattern, builtin } = patternOf(value.pattern, fail);
  const name = value.name ?? builtin ?? `guardrails[${index}]`;
  if (typeof name !== 'string' || !NAME.test(name)) fail(`name must match ${NAME}`);
  if (value.replacement !== undefined && typeof value.replacement !== 'string') fail('replacement must be a string');
  if (value.replacement !== undefined && action !== 'redact') fail('replacement belongs to action: redact');
  if (value.reason !== undefined && (typeof value.reason !== 'string' || value.reason === '')) fail('reason must be a non-empty string');
  return Object.freeze({
    kind: 'pattern',
    name: name as string,
    matchesTool: toolMatcher(value.tools, fail),
    pattern,
    action,
    ...whereOf(value.on, fail),
    replacement: (value.replacement as string | undefined) ?? `[redacted:${name as string}]`,
    reason: (value.reason as string | undefined) ?? null,
  });
}

/** The file's rules in order, then the plugins' guardrails; throws ConfigError naming the first bad rule. */
export function compileGuards(file: string | null, entries: readonly RawGuardRule[], plugins: readonly GuardrailDefinition[]): Guard[] {
  const guards: Guard[] = entries.map((entry, index) => compileRule(file ?? 'TOOLS_FILE', entry, index));
  for (const definition of plugins) {
    const matchesTool = toolMatcher(definition.tools, (problem) => {
      throw new ConfigError(`guardrail "${definition.name}": ${problem}`);
    });
    guards.push(Object.freeze({ kind: 'plugin', name: definition.name, matchesTool, definition }));
  }
  return guards;
}

/** The problem of every bad rule, one line each (`toolport check`). */
export function guardProblems(file: string, entries: readonly RawGuardRule[]): string[] {
  return entries.flatMap((entry, index) => {
    try {
      compileRule(file, entry, index);
      return [];
    } catch (err) {
      return [(err as Error).message];
    }
  });
}
