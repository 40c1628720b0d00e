/** OpenAI Chat Completions: `tool_calls` in, one `tool` message per call out, `{type:"function", function}` tools. */
import { NoToolCall } from '../errors.ts';
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { JsonSchema } from '../tools/types.ts';
import { qualifiesForStrict } from './strict.ts';
import { callName, callOrTurn, requiredCallId } from './turn.ts';
import { isObject } from '../json.ts';
import type { Format, ToolChoice } from './types.ts';

const CALL = '{"id","type":"function","function":{"name","arguments":"<json>"}}';
const SHAPES = `openai ${CALL} or {"role":"assistant","tool_calls":[…]}`;

export interface OpenAiToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export interface OpenAiTool {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema; strict?: boolean };
}

export type OpenAiToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; function: { name: string } };

function isCall(body: unknown): body is Record<string, unknown> {
  return isObject(body) && body.type === 'function' && isObject(body.function);
}

function toCall(item: unknown, where: string): ToolCall {
  // Every entry of tool_calls is a call: one we cannot run (a "custom" tool) must not be dropped silently.
  if (!isObject(item) || (item.type !== undefined && item.type !== 'function') || !isObject(item.function)) {
    throw new NoToolCall(`${where} is not a function tool call: expected ${CALL}`);
  }
  return { id: requiredCallId(item.id, where, CALL), name: callName(item.function.name, where, CALL), arguments: item.function.arguments };
}

export function renderOpenAiToolMessage(result: AnsweredResult): OpenAiToolMessage {
  return { role: 'tool', tool_call_id: result.id, content: result.content };
}

export function renderOpenAiTool(tool: RegisteredTool): OpenAiTool {
  const fn: OpenAiTool['function'] = { name: tool.name, description: tool.description, parameters: tool.parameters };
  if (qualifiesForStrict(tool.parameters)) fn.strict = true;
  return { type: 'function', function: fn };
}

export function renderOpenAiToolChoice(choice: ToolChoice): OpenAiToolChoice {
  return choice.mode === 'tool' ? { type: 'function', function: { name: choice.name } } : choice.mode;
}

export const openaiFormat: Format = {
  name: 'openai',
  ...callOrTurn('tool_calls', SHAPES, isCall, toCall),
  toolMessage: renderOpenAiToolMessage,
  turnMessages: (results) => results.map(renderOpenAiToolMessage),
  renderTool: renderOpenAiTool,
  renderToolChoice: renderOpenAiToolChoice,
};
