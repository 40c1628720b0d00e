/** Anthropic Messages: `tool_use` blocks in, one `user` message of `tool_result` blocks out, `input_schema` tools. */
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { JsonSchema } from '../tools/types.ts';
import { callName, callOrTurn, requiredCallId, objectArguments } from './turn.ts';
import { isObject } from '../json.ts';
import type { Format, ToolChoice } from './types.ts';

const CALL = '{"type":"tool_use","id","name","input":{…}}';
const SHAPES = `anthropic ${CALL} or {"role":"assistant","content":[…blocks…]}`;

export interface AnthropicToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string;
  is_error: boolean;
}

export interface AnthropicToolResultMessage {
  role: 'user';
  content: AnthropicToolResultBlock[];
}

export interface AnthropicTool {
  name: string;
  description: string;
  input_schema: JsonSchema & { type: 'object' };
}

export type AnthropicToolChoice = { type: 'auto' } | { type: 'none' } | { type: 'any' } | { type: 'tool'; name: string };

function isCall(item: unknown): item is Record<string, unknown> {
  return isObject(item) && item.type === 'tool_use';
}

/** Text, thinking and server-tool blocks are not calls for us to run. */
function pickCall(item: unknown, where: string): ToolCall | null {
  if (!isCall(item)) return null;
  return { id: requiredCallId(item.id, where, CALL), name: callName(item.name, where, CALL), ...objectArguments(item.input) };
}

export function renderAnthropicToolResult(result: AnsweredResult): AnthropicToolResultBlock {
  return { type: 'tool_result', tool_use_id: result.id, content: result.content, is_error: !result.success };
}

export function renderAnthropicTurn(results: readonly AnsweredResult[]): AnthropicToolResultMessage[] {
  return [{ role: 'user', content: results.map(renderAnthropicToolResult) }];
}

export function renderAnthropicTool(tool: RegisteredTool): AnthropicTool {
  return { name: tool.name, description: tool.description, input_schema: tool.parameters as AnthropicTool['input_schema'] };
}

export function renderAnthropicToolChoice(choice: ToolChoice): AnthropicToolChoice {
  if (choice.mode === 'tool') return { type: 'tool', name: choice.name };
  return { type: choice.mode === 'required' ? 'any' : choice.mode };
}

export const anthropicFormat: Format = {
  name: 'anthropic',
  // A Chat Completions message may also carry a content array, but never beside tool_calls here.
  ...callOrTurn('content', SHAPES, isCall, pickCall, (body) => !('tool_calls' in body)),
  toolMessage: renderAnthropicToolResult,
  turnMessages: renderAnthropicTurn,
  renderTool: renderAnthropicTool,
  renderToolChoice: renderAnthropicToolChoice,
};
