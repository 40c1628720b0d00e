/** Every format, one call and a whole turn, through the real HTTP app: results in the provider's exact shape. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post, STORES } from '../helpers/app.ts';
import { anthropicMessage, geminiContent, mcpCallParams, openaiChatMessage, registerDocTools, responsesOutput } from '../helpers/provider-payloads.ts';

const weather = (location: string) => `It is 14°C in ${location}.\n\n${JSON.stringify({ location, temperature_c: 14 })}`;
const lights = (brightness: number, colorTemperature: string) => `Lights set.\n\n${JSON.stringify({ brightness, colorTemperature })}`;

describe.each(STORES)('provider formats (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store, { register: registerDocTools });
  });
  afterAll(() => app.close());

  describe('native', () => {
    it('answers one call with the result itself as its message', async () => {
      const { body } = await post(app, { id: 'n1', name: 'get_weather', arguments: { location: 'Oslo' } });
      expect(body.tool_message).toEqual({
        message: 'It is 14°C in Oslo.',
        value: { location: 'Oslo', temperature_c: 14 },
        success: true,
        exclude_value_from_context: false,
      });
    });

    it('answers a turn with one native message per call, in call order', async () => {
      const { body } = await post(app, { calls: [{ name: 'get_weather', arguments: '{"location":"Rome"}' }, { name: 'nope' }] });
      expect(body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false]);
      expect(body.messages).toEqual(body.results.map((r: { tool_message: unknown }) => r.tool_message));
    });
  });

  describe('openai (Chat Completions)', () => {
    it('answers one call with a tool message', async () => {
      const { status, body } = await post(app, openaiChatMessage.tool_calls[0]);
      expect(status).toBe(200);
      expect(body).toMatchObject({ id: 'call_12345xyz', name: 'get_weather', success: true });
      expect(body.tool_message).toEqual({ role: 'tool', tool_call_id: 'call_12345xyz', content: weather('Paris, France') });
    });

    it('answers an assistant message with one tool message per call, in order', async () => {
      const { body } = await post(app, openaiChatMessage);
      expect(body.messages).toEqual([
        { role: 'tool', tool_call_id: 'call_12345xyz', content: weather('Paris, France') },
        { role: 'tool', tool_call_id: 'call_67890abc', content: weather('Bogotá, Colombia') },
      ]);
    });

    it('answers arguments that are not JSON with invalid_arguments, not a 400', async () => {
      const { status, body } = await post(app, { id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{"location":' } });
      expect(status).toBe(200);
      expect(body.error.code).toBe('invalid_arguments');
      expect(body.tool_message).toEqual({ role: 'tool', tool_call_id: 'c1', content: body.content });
    });
  });

  describe('openai-responses', () => {
    it('answers one function_call item with a function_call_output item', async () => {
      const { body } = await post(app, responsesOutput.output[1]);
      expect(body.tool_message).toEqual({ type: 'function_call_output', call_id: 'call_12345xyz', output: weather('Paris, France') });
    });

    it('answers the output items with one function_call_output per call, skipping other items', async () => {
      const { body } = await post(app, responsesOutput);
      expect(body.results).toHaveLength(2);
      expect(body.messages).toEqual([
        { type: 'function_call_output', call_id: 'call_12345xyz', output: weather('Paris, France') },
        { type: 'function_call_output', call_id: 'call_67890abc', output: weather('Bogotá, Colombia') },
      ]);
    });

    it('answers arguments that are not JSON with invalid_arguments in the function_call_output', async () => {
      const { status, body } = await post(app, { type: 'function_call', call_id: 'c9', name: 'get_weather', arguments: 'Paris' });
      expect(status).toBe(200);
      expect(body.error.code).toBe('invalid_arguments');
      expect(body.tool_message).toEqual({ type: 'function_call_output', call_id: 'c9', output: body.content });
      expect(body.content).toContain('not valid JSON');
    });
  });

  describe('anthropic', () => {
    it('answers one tool_use block with a tool_result block', async () => {
      const { body } = await post(app, anthropicMessage.content[1]);
      expect(body.tool_message).toEqual({
        type: 'tool_result',
        tool_use_id: 'toolu_01Nu82nfXTcUufvPqZ4VHJmv',
        content: weather('London, United Kingdom'),
        is_error: false,
      });
    });

    it('answers a message with ONE user message holding every tool_result, text blocks ignored', async () => {
      const { body } = await post(app, anthropicMessage);
      expect(body.messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_01Nu82nfXTcUufvPqZ4VHJmv', content: weather('London, United Kingdom'), is_error: false },
            { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: weather('San Francisco, CA'), is_error: false },
          ],
        },
      ]);
    });

    it('marks a failed call is_error, and a string where the input object belongs is invalid_arguments', async () => {
      const { body } = await post(app, { type: 'tool_use', id: 'toolu_x', name: 'get_weather', input: '{"location":"Paris"}' });
      expect(body.error.code).toBe('invalid_arguments');
      expect(body.tool_message).toMatchObject({ tool_use_id: 'toolu_x', is_error: true });
    });
  });

  describe('gemini', () => {
    it('answers one functionCall with a functionResponse naming its id', async () => {
      const { body } = await post(app, geminiContent.parts[0]);
      expect(body.tool_message).toEqual({ functionResponse: { name: 'set_light_values', id: 'fc-1', response: { output: lights(25, 'warm') } } });
    });

    it('answers a model turn with one user turn of functionResponse parts, an id only where the call had one', async () => {
      const { body } = await post(app, geminiContent);
      expect(body.messages).toEqual([
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'set_light_values', id: 'fc-1', response: { output: lights(25, 'warm') } } },
            { functionResponse: { name: 'set_light_values', response: { output: lights(100, 'daylight') } } },
          ],
        },
      ]);
    });

    it('answers a failure under "error" and takes a call without args', async () => {
      const { body } = await post(app, { role: 'model', parts: [{ text: 'Let me try.' }, { functionCall: { name: 'get_weather' } }] });
      expect(body.results[0].error.code).toBe('invalid_arguments');
      expect(body.messages[0].parts[0].functionResponse.response).toEqual({ error: body.results[0].content });
    });
  });

  describe('mcp (only with ?format=mcp)', () => {
    it('answers tools/call params with a CallToolResult carrying structuredContent', async () => {
      const { body } = await post(app, mcpCallParams, {}, '/tools/invoke?format=mcp');
      expect(body.tool_message).toEqual({
        content: [{ type: 'text', text: weather('New York') }],
        structuredContent: { location: 'New York', temperature_c: 14 },
        isError: false,
      });
    });

    it('answers {"calls": [...]} with one CallToolResult per call, failures as isError', async () => {
      const { body } = await post(app, { calls: [mcpCallParams, { name: 'get_weather', arguments: { city: 'x' } }] }, {}, '/tools/invoke?format=mcp');
      expect(body.messages).toHaveLength(2);
      expect(body.messages[0].structuredContent).toEqual({ location: 'New York', temperature_c: 14 });
      expect(body.messages[1]).toEqual({ content: [{ type: 'text', text: body.results[1].content }], isError: true });
    });

    it('is never detected: the same body without ?format=mcp is native', async () => {
      const { body } = await post(app, mcpCallParams);
      expect(body.tool_message).toHaveProperty('message');
    });
  });
});
