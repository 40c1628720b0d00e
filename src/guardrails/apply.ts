/** What a pattern rule does to a call's arguments or result: finds its matches in every string, and replaces them. */
import { isObject } from '../json.ts';
import { RESULT_TEXT, type InvocationResult } from '../tools/outcome.ts';
import type { ResultRef } from '../store/results.ts';
import { withAttachmentsNamed, type ResultText } from '../tools/render.ts';
import { matches, replaceMatches, type Pattern } from './patterns.ts';
import type { GuardWhere, PatternGuard } from './rules.ts';

/** What one guard decided about a subject: nothing, a flag, a denial, or the subject redacted. */
export type Checked<T> = { action: null } | { action: 'flag' } | { action: 'deny'; reason: string } | { action: 'redact'; value: T };

/** Whether any string in `value` (object keys aside) matches. */
function found(pattern: Pattern, value: unknown): boolean {
  if (typeof value === 'string') return matches(pattern, value);
  if (Array.isArray(value)) return value.some((item) => found(pattern, item));
  if (isObject(value)) return Object.values(value).some((item) => found(pattern, item));
  return false;
}

/** `value` with every match replaced; the very same object when nothing matched (copy on write). */
function replaced(pattern: Pattern, value: unknown, replacement: string): unknown {
  if (typeof value === 'string') return replaceMatches(pattern, value, replacement);
  if (Array.isArray(value)) {
    const items = value.map((item) => replaced(pattern, item, replacement));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (isObject(value)) {
    let copy: Record<string, unknown> | null = null;
    for (const [key, item] of Object.entries(value)) {
      const next = replaced(pattern, item, replacement);
      if (next !== item) (copy ??= { ...value })[key] = next;
    }
    return copy ?? value;
  }
  return value;
}

export function applyPattern<T>(guard: PatternGuard, subject: T): Checked<T> {
  if (!found(guard.pattern, subject)) return { action: null };
  if (guard.action === 'flag') return { action: 'flag' };
  if (guard.action === 'deny') return { action: 'deny', reason: guard.reason ?? `it holds a match of ${guard.name}` };
  return { action: 'redact', value: replaced(guard.pattern, subject, guard.replacement) as T };
}

/** A plugin's replacement: new arguments (an object) for input; `message` and/or `value` for output. */
export function redactValue<T>(subject: T, replacement: unknown, where: GuardWhere): T {
  if (!isObject(replacement)) return subject;
  return (where === 'input' ? replacement : { ...(subject as object), ...replacement }) as T;
}

/** The parts of a redacted result: its message and value, and the text its content is rendered from. */
export interface Redacted {
  message: string;
  value: unknown;
  /** The message (attachments named) and the value's JSON, cut at `limit` (the tool's own; null: the service's). */
  text: ResultText;
}

export function redactedParts(result: InvocationResult, shown: { message: string; value: unknown }, limit: number | null): Redacted {
  const message = typeof shown.message === 'string' ? shown.message : result.message;
  const named = result.attachments === undefined ? message : withAttachmentsNamed(message, result.attachments);
  const valueJson = result.exclude_value_from_context || shown.value === null || shown.value === undefined ? null : JSON.stringify(shown.value);
  return { message, value: shown.value, text: { message: named, valueJson, limit } };
}

/** The result with its message and value replaced, and its text made again from them (pointing at `kept`). */
export function redactResult(result: InvocationResult, parts: Redacted, kept: ResultRef | null): InvocationResult {
  const redacted: InvocationResult = { ...result, message: parts.message, value: parts.value, [RESULT_TEXT]: parts.text };
  if (kept === null) delete redacted.result_ref;
  else redacted.result_ref = kept;
  return redacted;
}
