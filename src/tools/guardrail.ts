/**
 * A guardrail of one's own (docs/guardrails.md): a plugin's check of a call's arguments before its
 * handler runs, and of its result after. Registered like a tool (a plugin's default export, or
 * `registry.registerGuardrail`); the guardrail stage (src/guardrails/) runs it.
 */

/** What a check decided: nothing (undefined or null), or one action. */
export type GuardrailVerdict =
  | null
  | undefined
  | { action: 'deny' | 'flag'; reason?: string }
  /** `value` replaces what was checked: the arguments (input), or `{message, value}` (output). */
  | { action: 'redact'; value: unknown; reason?: string };

/** What a check knows of the call besides what it checks. */
export interface GuardrailCall {
  readonly tool: string;
  readonly caller: string | null;
}

/** The part of a result an output check sees and may replace. */
export interface GuardrailOutput {
  readonly message: string;
  readonly value: unknown;
}

export interface GuardrailDefinition {
  /** Names the guardrail in results, spans, events, metrics and `guardrail_denied`. */
  readonly name: string;
  /** Tool-name globs it applies to; absent = every tool. */
  readonly tools?: readonly string[];
  /** Checks the call's validated arguments before the handler runs. */
  readonly input?: (args: Readonly<Record<string, unknown>>, call: GuardrailCall) => GuardrailVerdict | Promise<GuardrailVerdict>;
  /** Checks what the handler returned, before it is recorded and answered. */
  readonly output?: (result: GuardrailOutput, call: GuardrailCall) => GuardrailVerdict | Promise<GuardrailVerdict>;
}

const GUARDRAIL = Symbol.for('toolport.guardrail');

/** Marks a definition as a guardrail, so a plugin may export it beside its tools. */
export function defineGuardrail(definition: GuardrailDefinition): GuardrailDefinition {
  return Object.freeze({ ...definition, [GUARDRAIL]: true });
}

export function isGuardrail(value: unknown): value is GuardrailDefinition {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[GUARDRAIL] === true;
}
