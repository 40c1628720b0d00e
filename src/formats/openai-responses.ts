/** OpenAI Responses: `function_call` output items in, `function_call_output` items out, flat function tools. */
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { JsonSchema } from '../tools/types.ts';
import { qualifiesForStrict } from './strict.ts';
import { callName, callOrTurn, requiredCallId } from './turn.ts';
import { isObject } from '../json.ts';
import type { Format, ToolChoice } from './types.ts';

const CALL = '{"type":"function_call","call_id","name","arguments":"<json>"}';
const SHAPES = `openai-responses ${CALL} or {"output":[…items…]}`;

export interface ResponsesFunctionCallOutput {
  type: 'function_call_output';
  call_id: string;
  output: string;
}

export interface ResponsesTool {
  type: 'function';
  name: string;
  description: string;
  parameters: JsonSchema;
  /** Always sent: the Responses API treats a missing `strict` as true and refuses schemas outside strict mode. */
  strict: boolean;
}

export type ResponsesToolChoice = 'auto' | 'none' | 'required' | { type: 'function'; name: string };

function isCall(item: unknown): item is Record<string, unknown> {
  return isObject(item) && item.type === 'function_call';
}

/** Output items other than function calls (messages, reasoning, hosted tool calls) are not ours to run. */
function pickCall(item: unknown, where: string): ToolCall | null {
  if (!isCall(item)) return null;
  return { id: requiredCallId(item.call_id, where, CALL), name: callName(item.name, where, CALL), arguments: item.arguments };
}

export function renderResponsesToolMessage(result: AnsweredResult): ResponsesFunctionCallOutput {
  return { type: 'function_call_output', call_id: result.id, output: result.content };
}

export function renderResponsesTool(tool: RegisteredTool): ResponsesTool {
  return { type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters, strict: qualifiesForStrict(tool.parameters) };
}

export function renderResponsesToolChoice(choice: ToolChoice): ResponsesToolChoice {
  return choice.mode === 'tool' ? { type: 'function', name: choice.name } : choice.mode;
}

export const openaiResponsesFormat: Format = {
  name: 'openai-responses',
  ...callOrTurn('output', SHAPES, isCall, pickCall),
  toolMessage: renderResponsesToolMessage,
  turnMessages: (results) => results.map(renderResponsesToolMessage),
  renderTool: renderResponsesTool,
  renderToolChoice: renderResponsesToolChoice,
};
