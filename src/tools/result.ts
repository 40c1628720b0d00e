/** What comes into a call (its arguments) and what comes out of a handler (its ToolResult), checked. */
import { parseJson } from '../json.ts';
import { reasonOf } from './outcome.ts';
import type { RegisteredTool } from './registry.ts';
import type { Attachment } from './types.ts';
import { violations } from './schema.ts';
import { JsonInputError } from '../errors.ts';

/** Arguments arrive as an object, a JSON string, or not at all; an empty string means none. */
export function parseArguments(raw: unknown): unknown {
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return {};
  try {
    return parseJson(raw);
  } catch (err) {
    throw err instanceof JsonInputError ? err : new JsonInputError('not valid JSON');
  }
}

export interface CheckedResult {
  attachments: Attachment[] | null;
  message: string;
  value: unknown;
  success: boolean;
  exclude: boolean;
  valueJson: string | null;
}

/** A ToolResult with its defaults applied, or what is wrong with it. */
export function checkResult(tool: RegisteredTool, raw: unknown): CheckedResult | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `the handler returned ${describeType(raw)}, not a ToolResult object`;
  const r = raw as Record<string, unknown>;
  if (typeof r.message !== 'string') return 'the handler returned a ToolResult without a string message';
  if (r.success !== undefined && typeof r.success !== 'boolean') return 'ToolResult.success must be a boolean';
  if (r.exclude_value_from_context !== undefined && typeof r.exclude_value_from_context !== 'boolean') {
    return 'ToolResult.exclude_value_from_context must be a boolean';
  }
  const attachments = r.attachments === undefined ? null : r.attachments;
  if (attachments !== null && !(Array.isArray(attachments) && attachments.every(isAttachment))) {
    return 'ToolResult.attachments must be a list of content blocks, each an object with a string type';
  }
  const value = r.value === undefined ? null : r.value;
  let valueJson: string | null = null;
  if (value !== null) {
    try {
      valueJson = JSON.stringify(value) ?? null;
    } catch (err) {
      return `ToolResult.value has no JSON form: ${reasonOf(err)}`;
    }
    if (valueJson === null) return 'ToolResult.value has no JSON form';
  }
  const success = r.success ?? true;
  if (success && value !== null && tool.validateResult !== null && !tool.validateResult(value)) {
    return `value breaks the result schema: ${violations(tool.validateResult.errors).join('; ')}`;
  }
  return { message: r.message, value, success, exclude: r.exclude_value_from_context === true, valueJson, attachments };
}

function isAttachment(block: unknown): block is Attachment {
  return typeof block === 'object' && block !== null && !Array.isArray(block) && typeof (block as { type?: unknown }).type === 'string';
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'undefined' ? 'nothing' : `a ${typeof value}`;
}

/** Tells the model its session id in `value.session_id`, and with `hint` in `message` too (docs/sessions-and-planning.md). */
export function announceSession(result: CheckedResult, id: string, hint: boolean): CheckedResult {
  const value = result.value;
  const message = hint
    ? `${result.message} Session "${id}" holds your plan: pass "session_id": "${id}" in your later planning and introspect_session calls to keep using it.`
    : result.message;
  if (value !== null && (typeof value !== 'object' || Array.isArray(value))) return { ...result, message };
  const announced = { ...(value as Record<string, unknown> | null), session_id: id };
  return { ...result, message, value: announced, valueJson: JSON.stringify(announced) };
}
