/**
 * Tool calls as the providers' own documentation shows them (copied from the function-calling
 * guides named beside each), and the tools they call, so the format tests run on real shapes.
 */
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';

/** The tools of the docs' examples: get_weather (OpenAI, Anthropic) and set_light_values (Gemini). */
export function registerDocTools(registry: SourceRegistry): void {
  registry.registerTool({
    name: 'get_weather',
    description: 'Get current temperature for a given location.',
    parameters: { type: 'object', properties: { location: { type: 'string', description: 'City and country e.g. Bogotá, Colombia' } }, required: ['location'] },
    result: { type: 'object', properties: { location: { type: 'string' }, temperature_c: { type: 'number' } }, required: ['location', 'temperature_c'] },
    handler: (params) => ok({ location: params.location as string, temperature_c: 14 }, `It is 14°C in ${params.location as string}.`),
  });
  registry.registerTool({
    name: 'set_light_values',
    description: 'Sets the brightness and color temperature of a light.',
    parameters: {
      type: 'object',
      properties: {
        brightness: { type: 'integer', description: 'Light level from 0 to 100. Zero is off and 100 is full brightness', minimum: 0, maximum: 100 },
        color_temp: { type: 'string', enum: ['daylight', 'cool', 'warm'], description: 'Color temperature of the light fixture' },
      },
      required: ['brightness', 'color_temp'],
    },
    handler: (params) => ok({ brightness: params.brightness, colorTemperature: params.color_temp }, 'Lights set.'),
  });
}

/** platform.openai.com/docs/guides/function-calling (Chat Completions): `completion.choices[0].message`. */
export const openaiChatMessage = {
  role: 'assistant',
  content: null,
  tool_calls: [
    { id: 'call_12345xyz', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris, France"}' } },
    { id: 'call_67890abc', type: 'function', function: { name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' } },
  ],
  refusal: null,
};

/** platform.openai.com/docs/guides/function-calling (Responses): `response.output`, with the message item models add. */
export const responsesOutput = {
  output: [
    { type: 'reasoning', id: 'rs_1', summary: [] },
    { type: 'function_call', id: 'fc_12345xyz', call_id: 'call_12345xyz', name: 'get_weather', arguments: '{"location":"Paris, France"}' },
    { type: 'function_call', id: 'fc_67890abc', call_id: 'call_67890abc', name: 'get_weather', arguments: '{"location":"Bogotá, Colombia"}' },
  ],
};

/** docs.anthropic.com/en/docs/build-with-claude/tool-use: the Messages API answer to "What is the weather like in London?". */
export const anthropicMessage = {
  id: 'msg_01DvvYuXbiFcdHauAHfS1jzo',
  type: 'message',
  role: 'assistant',
  model: 'claude-3-opus-20240229',
  stop_sequence: null,
  usage: { input_tokens: 487, output_tokens: 135 },
  content: [
    { type: 'text', text: '<thinking>\nThe user is asking about the current weather, so the relevant tool to use is get_weather.\n</thinking>' },
    { type: 'tool_use', id: 'toolu_01Nu82nfXTcUufvPqZ4VHJmv', name: 'get_weather', input: { location: 'London, United Kingdom' } },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { location: 'San Francisco, CA' } },
  ],
  stop_reason: 'tool_use',
};

/** ai.google.dev/gemini-api/docs/function-calling: `candidates[0].content` (REST), ids as the API now sends them. */
export const geminiContent = {
  role: 'model',
  parts: [
    { functionCall: { name: 'set_light_values', args: { brightness: 25, color_temp: 'warm' }, id: 'fc-1' } },
    { functionCall: { name: 'set_light_values', args: { brightness: 100, color_temp: 'daylight' } } },
  ],
};

/** modelcontextprotocol.io/specification (tools/call): the request's params. */
export const mcpCallParams = { name: 'get_weather', arguments: { location: 'New York' } };
