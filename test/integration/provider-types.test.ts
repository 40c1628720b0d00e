/**
 * What toolport sends is what the providers' own SDKs take: `tsc --noEmit` checks every rendered
 * message, tool and tool_choice against the SDK parameter types (openai, @anthropic-ai/sdk,
 * @google/genai, @modelcontextprotocol/sdk), calls typed as the SDKs' response types go in through
 * the HTTP app, and MCP results are checked at run time by the SDK's own zod schemas.
 */
import type {
  ContentBlock,
  Message,
  MessageParam,
  Tool as AnthropicSdkTool,
  ToolChoice as AnthropicSdkToolChoice,
  ToolResultBlockParam,
} from '@anthropic-ai/sdk/resources/messages';
import type { Content, FunctionDeclaration, GenerateContentConfig, Part, ToolConfig } from '@google/genai';
import { CallToolRequestSchema, CallToolResultSchema, ToolSchema } from '@modelcontextprotocol/sdk/types.js';
import type { FastifyInstance } from 'fastify';
import type {
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
  ChatCompletionToolChoiceOption,
  ChatCompletionToolMessageParam,
} from 'openai/resources/chat/completions';
import type {
  FunctionTool,
  ResponseFunctionToolCall,
  ResponseInput,
  ResponseInputItem,
  ToolChoiceFunction,
  ToolChoiceOptions,
} from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderAnthropicTool, renderAnthropicToolChoice, renderAnthropicToolResult, renderAnthropicTurn } from '../../src/formats/anthropic.ts';
import {
  renderGeminiDeclaration,
  renderGeminiFunctionResponse,
  renderGeminiToolConfig,
  renderGeminiTools,
  renderGeminiTurn,
} from '../../src/formats/gemini.ts';
import { renderMcpCallToolResult, renderMcpTool } from '../../src/formats/mcp.ts';
import { renderResponsesTool, renderResponsesToolChoice, renderResponsesToolMessage } from '../../src/formats/openai-responses.ts';
import { renderOpenAiTool, renderOpenAiToolChoice, renderOpenAiToolMessage } from '../../src/formats/openai.ts';
import type { AnsweredResult } from '../../src/tools/outcome.ts';
import type { RegisteredTool } from '../../src/tools/registry.ts';
import { makeApp, post } from '../helpers/app.ts';
import { registerDocTools } from '../helpers/provider-payloads.ts';

/** Gemini's SDK types use TypeScript string enums (`Type.OBJECT`); JSON carries their values ("OBJECT"). */
type EnumsAsValues<T> = T extends string ? `${T}` : T extends (infer U)[] ? EnumsAsValues<U>[] : T extends object ? { [K in keyof T]: EnumsAsValues<T[K]> } : T;

// Calls exactly as the SDKs type a model's answer.
const chatMessage: ChatCompletionMessage = {
  role: 'assistant',
  content: null,
  refusal: null,
  tool_calls: [{ id: 'call_12345xyz', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } }],
};
const responsesCall: ResponseFunctionToolCall = {
  type: 'function_call',
  id: 'fc_12345xyz',
  call_id: 'call_12345xyz',
  name: 'get_weather',
  arguments: '{"location":"Paris, France"}',
};
const anthropicBlocks: ContentBlock[] = [
  { type: 'text', text: 'Checking.', citations: null },
  { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA' }, caller: { type: 'direct' } },
];
const anthropicMessage: Pick<Message, 'role' | 'content'> = { role: 'assistant', content: anthropicBlocks };
const geminiTurn: Content = {
  role: 'model',
  parts: [{ functionCall: { name: 'set_light_values', args: { brightness: 25, color_temp: 'warm' }, id: 'fc-1' } }],
};

describe('messages and tools against the providers’ SDK types', () => {
  let app: FastifyInstance;
  let weatherTool: RegisteredTool;
  let lightsTool: RegisteredTool;
  const weatherOk = async (format: string, body: unknown): Promise<AnsweredResult> => {
    const { status, body: result } = await post(app, body, {}, `/tools/invoke?format=${format}`);
    expect(status).toBe(200);
    return (result.results?.[0] ?? result) as AnsweredResult;
  };
  beforeAll(async () => {
    app = await makeApp('memory', { register: registerDocTools });
    weatherTool = app.toolport.registry.get('get_weather')!;
    lightsTool = app.toolport.registry.get('set_light_values')!;
  });
  afterAll(() => app.close());

  it('OpenAI Chat: the tool message, the tool and tool_choice are the SDK param types', async () => {
    const result = await weatherOk('openai', chatMessage);
    const message: ChatCompletionToolMessageParam = renderOpenAiToolMessage(result);
    const history: ChatCompletionMessageParam[] = [{ role: 'assistant', tool_calls: chatMessage.tool_calls }, message];
    const tool: ChatCompletionFunctionTool = renderOpenAiTool(lightsTool);
    const choices: ChatCompletionToolChoiceOption[] = [
      renderOpenAiToolChoice({ mode: 'required' }),
      renderOpenAiToolChoice({ mode: 'tool', name: 'get_weather' }),
    ];
    expect(history[1]).toEqual(result.tool_message);
    expect(tool.function.strict).toBe(true);
    expect(choices[1]).toEqual({ type: 'function', function: { name: 'get_weather' } });
  });

  it('OpenAI Responses: function_call_output is a ResponseInputItem, the tool a FunctionTool', async () => {
    const result = await weatherOk('openai-responses', { output: [responsesCall] });
    const item: ResponseInputItem.FunctionCallOutput = renderResponsesToolMessage(result);
    const input: ResponseInput = [responsesCall, item];
    const tool: FunctionTool = renderResponsesTool(weatherTool);
    const choice: ToolChoiceOptions | ToolChoiceFunction = renderResponsesToolChoice({ mode: 'tool', name: 'get_weather' });
    expect(input[1]).toEqual(result.tool_message);
    expect(tool.strict).toBe(true);
    expect(choice).toEqual({ type: 'function', name: 'get_weather' });
  });

  it('Anthropic: one user MessageParam of ToolResultBlockParams; Tool and ToolChoice', async () => {
    const result = await weatherOk('anthropic', anthropicMessage);
    const block: ToolResultBlockParam = renderAnthropicToolResult(result);
    const turn: MessageParam[] = renderAnthropicTurn([result]);
    const tool: AnthropicSdkTool = renderAnthropicTool(weatherTool);
    const choice: AnthropicSdkToolChoice = renderAnthropicToolChoice({ mode: 'required' });
    expect(block).toEqual(result.tool_message);
    expect(turn).toEqual([{ role: 'user', content: [block] }]);
    expect(tool.input_schema.type).toBe('object');
    expect(choice).toEqual({ type: 'any' });
  });

  it('Gemini: functionResponse Parts in a user Content; FunctionDeclaration and ToolConfig', async () => {
    const result = await weatherOk('gemini', geminiTurn);
    const part: Part = renderGeminiFunctionResponse(result, { id: 'fc-1', name: 'set_light_values', arguments: {} });
    const turn: Content[] = renderGeminiTurn([result], [{ id: 'fc-1', name: 'set_light_values', arguments: {} }]);
    const declaration: EnumsAsValues<FunctionDeclaration> = renderGeminiDeclaration(lightsTool);
    const config: EnumsAsValues<ToolConfig> = renderGeminiToolConfig({ mode: 'tool', name: 'set_light_values' });
    expect(part).toEqual(result.tool_message);
    expect(turn[0]!.parts).toEqual([part]);
    expect(part.functionResponse?.response).toEqual({ output: 'Lights set.\n\n{"brightness":25,"colorTemperature":"warm"}' });
    expect(declaration.parameters?.properties?.color_temp).toEqual({
      type: 'STRING',
      enum: ['daylight', 'cool', 'warm'],
      description: 'Color temperature of the light fixture',
    });
    expect(config.functionCallingConfig?.allowedFunctionNames).toEqual(['set_light_values']);
  });

  it('Gemini: GET /tools?format=gemini is the `tools` of a GenerateContentConfig as it stands', async () => {
    const declarations = app.toolport.registry.list().map(renderGeminiDeclaration);
    const tools: EnumsAsValues<NonNullable<GenerateContentConfig['tools']>> = renderGeminiTools(declarations);
    const served = (await app.inject({ method: 'GET', url: '/tools?format=gemini' })).json();
    expect(served.tools).toEqual(tools);
    expect(tools[0]).toEqual({ functionDeclarations: declarations });
  });

  it('MCP: tools/call params parse as the SDK request; CallToolResult and Tool pass its zod schemas', async () => {
    const request = CallToolRequestSchema.parse({ method: 'tools/call', params: { name: 'get_weather', arguments: { location: 'New York' } } });
    const result = await weatherOk('mcp', request.params);
    expect(CallToolResultSchema.parse(result.tool_message)).toEqual(renderMcpCallToolResult(result));
    expect(renderMcpCallToolResult(result).structuredContent).toEqual({ location: 'New York', temperature_c: 14 });
    const failed = await weatherOk('mcp', { name: 'get_weather', arguments: {} });
    expect(CallToolResultSchema.parse(failed.tool_message).isError).toBe(true);
    for (const tool of app.toolport.registry.list()) expect(ToolSchema.parse(renderMcpTool(tool)).name).toBe(tool.name);
  });
});
