/** Gemini: `functionCall` parts in, one `user` turn of `functionResponse` parts out, function declarations. */
import { NoToolCall } from '../errors.ts';
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import { toGeminiSchema, type GeminiSchema } from './gemini-schema.ts';
import { callId } from './native.ts';
import { callName, callOrTurn, objectArguments } from './turn.ts';
import { isObject } from '../json.ts';
import type { Format, ToolChoice } from './types.ts';

const CALL = '{"functionCall":{"name","args":{…},"id"?}}';
const SHAPES = `gemini ${CALL} or {"role":"model","parts":[…]}`;

export interface GeminiFunctionResponsePart {
  functionResponse: {
    name: string;
    id?: string;
    /** Gemini reads `output` as the function's output and `error` as its failure. */
    response: { output: string } | { error: string };
  };
}

export interface GeminiFunctionResponseTurn {
  role: 'user';
  parts: GeminiFunctionResponsePart[];
}

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  /** Absent for a tool without parameters: Gemini refuses an OBJECT with no properties. */
  parameters?: GeminiSchema;
}

/** Gemini's `Tool`: the declarations travel grouped, `tools: [{functionDeclarations: […]}]`. */
export interface GeminiTool {
  functionDeclarations: GeminiFunctionDeclaration[];
}

export interface GeminiToolConfig {
  functionCallingConfig: { mode: 'AUTO' | 'NONE' | 'ANY'; allowedFunctionNames?: string[] };
}

function isCall(item: unknown): item is { functionCall: Record<string, unknown> } {
  return isObject(item) && isObject(item.functionCall);
}

/** Text, thought and other parts are not calls. */
function pickCall(item: unknown, where: string): ToolCall | null {
  if (!isObject(item) || !('functionCall' in item)) return null;
  if (!isCall(item)) throw new NoToolCall(`${where}.functionCall is not an object: expected ${CALL}`);
  const call = item.functionCall;
  return { id: callId(call.id, where), name: callName(call.name, where, CALL), ...objectArguments(call.args) };
}

/** The response names the call's id only when the model gave one (ids are optional in Gemini). */
export function renderGeminiFunctionResponse(result: AnsweredResult, call?: ToolCall): GeminiFunctionResponsePart {
  return {
    functionResponse: {
      name: result.name,
      ...(call?.id != null && { id: result.id }),
      response: result.success ? { output: result.content } : { error: result.content },
    },
  };
}

export function renderGeminiTurn(results: readonly AnsweredResult[], calls?: readonly ToolCall[]): GeminiFunctionResponseTurn[] {
  return [{ role: 'user', parts: results.map((r, i) => renderGeminiFunctionResponse(r, calls?.[i])) }];
}

export function renderGeminiDeclaration(tool: RegisteredTool): GeminiFunctionDeclaration {
  const parameters = toGeminiSchema(tool.parameters);
  return parameters.properties === undefined
    ? { name: tool.name, description: tool.description }
    : { name: tool.name, description: tool.description, parameters };
}

/** One `Tool` holding every declaration; no tool at all when the caller may call none (Gemini refuses an empty group). */
export function renderGeminiTools(declarations: GeminiFunctionDeclaration[]): GeminiTool[] {
  return declarations.length === 0 ? [] : [{ functionDeclarations: declarations }];
}

export function renderGeminiToolConfig(choice: ToolChoice): GeminiToolConfig {
  if (choice.mode === 'tool') return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
  return { functionCallingConfig: { mode: choice.mode === 'required' ? 'ANY' : choice.mode === 'none' ? 'NONE' : 'AUTO' } };
}

export const geminiFormat: Format = {
  name: 'gemini',
  ...callOrTurn('parts', SHAPES, isCall, pickCall),
  toolMessage: renderGeminiFunctionResponse,
  turnMessages: renderGeminiTurn,
  renderTool: renderGeminiDeclaration,
  renderToolList: (definitions) => renderGeminiTools(definitions as GeminiFunctionDeclaration[]),
  renderToolChoice: renderGeminiToolConfig,
};
