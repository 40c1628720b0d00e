/** toolport's own shape: `{name, arguments, id?}` or `{calls: [...]}`; the result is its own message. */
import { NoToolCall } from '../errors.ts';
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { ToolResult } from '../tools/types.ts';
import { isObject } from '../json.ts';
import type { Format, ParsedCalls, ToolChoice } from './types.ts';

export const MAX_CALLS_PER_TURN = 128;

/** Keys that mark another provider's shape, so a native body never swallows one. */
const FOREIGN_KEYS = ['type', 'function', 'functionCall', 'tool_calls', 'content', 'parts', 'output', 'role'];

function isNativeCall(body: unknown): body is Record<string, unknown> {
  return isObject(body) && typeof body.name === 'string' && !FOREIGN_KEYS.some((k) => k in body);
}

export function callId(raw: unknown, where: string): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw === 'string' && raw.length > 0 && raw.length <= 256) return raw;
  if (typeof raw === 'number' && Number.isFinite(raw)) return String(raw);
  throw new NoToolCall(`${where}: id must be a non-empty string of at most 256 characters`);
}

export function checkTurnSize(count: number, what: string): void {
  if (count === 0) throw new NoToolCall(`${what} holds no tool call`);
  if (count > MAX_CALLS_PER_TURN) throw new NoToolCall(`${what} holds ${count} tool calls; at most ${MAX_CALLS_PER_TURN} are taken at once`);
}

function toCall(body: Record<string, unknown>, where: string): ToolCall {
  return { id: callId(body.id, where), name: body.name as string, arguments: body.arguments };
}

export const nativeFormat: Format = {
  name: 'native',
  shapes: 'native {"name","arguments","id"?} or {"calls":[…]}',
  detect(body) {
    return isNativeCall(body) || (isObject(body) && Array.isArray(body.calls) && !FOREIGN_KEYS.some((k) => k in body));
  },
  parse(body): ParsedCalls {
    if (isNativeCall(body)) return { calls: [toCall(body, 'the call')], turn: false };
    const calls = (body as { calls: unknown[] }).calls;
    checkTurnSize(calls.length, 'calls');
    return {
      turn: true,
      calls: calls.map((call, i) => {
        if (!isNativeCall(call)) throw new NoToolCall(`calls[${i}] is not a tool call: expected {"name", "arguments", "id"?}`);
        return toCall(call, `calls[${i}]`);
      }),
    };
  },
  toolMessage(result: AnsweredResult) {
    const message: ToolResult = {
      message: result.message,
      value: result.value,
      success: result.success,
      exclude_value_from_context: result.exclude_value_from_context,
    };
    if (result.attachments !== undefined) message.attachments = result.attachments;
    return message;
  },
  turnMessages(results) {
    return results.map((r) => this.toolMessage(r));
  },
  renderTool(tool: RegisteredTool) {
    return {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      ...(tool.result !== null && { result: tool.result }),
      examples: tool.examples,
      idempotency: tool.idempotency,
      annotations: tool.annotations,
      timeout_ms: tool.timeoutMs,
      hash: tool.hash,
    };
  },
  renderToolChoice(choice: ToolChoice) {
    return choice.mode === 'tool' ? { name: choice.name } : choice.mode;
  },
};
