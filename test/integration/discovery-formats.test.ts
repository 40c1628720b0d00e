/** GET /tools?format=… for every provider, tool_choice, and ETags that differ per format and choice. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { makeApp } from '../helpers/app.ts';
import { registerDocTools } from '../helpers/provider-payloads.ts';

function register(registry: SourceRegistry): void {
  registerDocTools(registry);
  registry.registerTool({
    name: 'delete_file',
    description: 'Delete a file.',
    parameters: { type: 'object', properties: { path: { type: 'string', minLength: 1 } }, required: ['path'] },
    annotations: { destructive: true, read_only: false },
    handler: () => ok(null, 'deleted'),
  });
}

describe('discovery per format', () => {
  let app: FastifyInstance;
  const get = async (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers });
  const listed = async (format: string) => {
    const tools = (await get(`/tools?format=${format}`)).json().tools;
    return format === 'gemini' ? tools[0].functionDeclarations : tools;
  };
  const tool = async (format: string, name: string) => (await listed(format)).find((t: any) => (t.name ?? t.function?.name) === name);
  beforeAll(async () => {
    app = await makeApp('memory', { register });
  });
  afterAll(() => app.close());

  it('serves OpenAI Chat tools, strict only where the schema qualifies', async () => {
    expect(await tool('openai', 'set_light_values')).toEqual({
      type: 'function',
      function: {
        name: 'set_light_values',
        description: 'Sets the brightness and color temperature of a light.',
        parameters: expect.objectContaining({ type: 'object', additionalProperties: false, required: ['brightness', 'color_temp'] }),
        strict: true,
      },
    });
    // echo's "n" is optional; delete_file uses minLength: neither may be strict.
    expect((await tool('openai', 'echo')).function).not.toHaveProperty('strict');
    expect((await tool('openai', 'delete_file')).function).not.toHaveProperty('strict');
  });

  it('serves Responses tools flat, with strict always stated', async () => {
    expect(await tool('openai-responses', 'set_light_values')).toMatchObject({
      type: 'function',
      name: 'set_light_values',
      strict: true,
      parameters: { type: 'object' },
    });
    expect(await tool('openai-responses', 'echo')).toMatchObject({ type: 'function', name: 'echo', strict: false });
  });

  it('serves Anthropic tools with input_schema', async () => {
    const listed = await tool('anthropic', 'get_weather');
    expect(Object.keys(listed)).toEqual(['name', 'description', 'input_schema']);
    expect(listed.input_schema).toMatchObject({ type: 'object', required: ['location'], additionalProperties: false });
  });

  it('serves Gemini declarations without refused keywords, and without parameters for a tool that takes none', async () => {
    expect(await tool('gemini', 'get_weather')).toEqual({
      name: 'get_weather',
      description: 'Get current temperature for a given location.',
      parameters: {
        type: 'OBJECT',
        properties: { location: { type: 'STRING', description: 'City and country e.g. Bogotá, Colombia' } },
        required: ['location'],
      },
    });
    expect(await tool('gemini', 'hang')).toEqual({ name: 'hang', description: 'Never answers.' });
    expect(JSON.stringify((await get('/tools?format=gemini')).json())).not.toContain('additionalProperties');
  });

  it('groups Gemini declarations as Gemini takes them: tools: [{functionDeclarations: […]}]', async () => {
    const body = (await get('/tools?format=gemini')).json();
    expect(Object.keys(body)).toEqual(['tools', 'hash']);
    expect(body.tools).toHaveLength(1);
    expect(Object.keys(body.tools[0])).toEqual(['functionDeclarations']);
    expect(body.tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toEqual(app.toolport.registry.list().map((t) => t.name));
  });

  it('serves MCP tools with inputSchema, outputSchema and annotations as hints', async () => {
    expect(await tool('mcp', 'get_weather')).toMatchObject({
      name: 'get_weather',
      inputSchema: { type: 'object' },
      outputSchema: { type: 'object', required: ['location', 'temperature_c'] },
    });
    expect((await tool('mcp', 'delete_file')).annotations).toEqual({ destructiveHint: true, readOnlyHint: false });
    expect(await tool('mcp', 'echo')).not.toHaveProperty('annotations');
  });

  it.each([
    ['openai', 'auto', 'auto'],
    ['openai', 'required', 'required'],
    ['openai', 'get_weather', { type: 'function', function: { name: 'get_weather' } }],
    ['openai-responses', 'none', 'none'],
    ['openai-responses', 'get_weather', { type: 'function', name: 'get_weather' }],
    ['anthropic', 'auto', { type: 'auto' }],
    ['anthropic', 'required', { type: 'any' }],
    ['anthropic', 'none', { type: 'none' }],
    ['anthropic', 'get_weather', { type: 'tool', name: 'get_weather' }],
    ['gemini', 'auto', { functionCallingConfig: { mode: 'AUTO' } }],
    ['gemini', 'required', { functionCallingConfig: { mode: 'ANY' } }],
    ['gemini', 'get_weather', { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } }],
    ['native', 'get_weather', { name: 'get_weather' }],
  ])('adds the provider tool_choice beside tools (%s, %s)', async (format, choice, expected) => {
    const response = await get(`/tools?format=${format}&tool_choice=${choice}`);
    expect(response.statusCode).toBe(200);
    expect(response.json().tool_choice).toEqual(expected);
    const tools = response.json().tools;
    expect((format === 'gemini' ? tools[0].functionDeclarations : tools).length).toBeGreaterThan(3);
  });

  it('answers 400 for a tool_choice naming no listed tool, or for mcp, which has none', async () => {
    for (const url of ['/tools?format=openai&tool_choice=nope', '/tools?format=mcp&tool_choice=auto']) {
      const response = await get(url);
      expect(response.statusCode).toBe(400);
      expect(response.headers['content-type']).toMatch(/problem\+json/);
    }
  });

  it('gives each format and tool_choice its own ETag, and 304 only for the matching one', async () => {
    const urls = [
      '/tools',
      '/tools?format=openai',
      '/tools?format=gemini',
      '/tools?format=openai&tool_choice=auto',
      '/tools?format=openai&tool_choice=get_weather',
    ];
    const tags = await Promise.all(urls.map(async (url) => String((await get(url)).headers.etag)));
    expect(new Set(tags).size).toBe(urls.length);
    const hash = (await get('/tools')).json().hash;
    expect(tags[0]).toBe(`"${hash}"`);
    expect(tags[1]).toContain(hash);
    for (const [i, url] of urls.entries()) {
      expect((await get(url, { 'if-none-match': tags[i]! })).statusCode).toBe(304);
      expect((await get(url, { 'if-none-match': tags[(i + 1) % urls.length]! })).statusCode).toBe(200);
    }
  });

  it('serves one tool in any format, its ETag varying by format', async () => {
    const native = await get('/tools/get_weather');
    const anthropic = await get('/tools/get_weather?format=anthropic');
    expect(anthropic.json()).toEqual(await tool('anthropic', 'get_weather'));
    expect(anthropic.headers.etag).not.toBe(native.headers.etag);
    expect((await get('/tools/get_weather?format=anthropic', { 'if-none-match': String(anthropic.headers.etag) })).statusCode).toBe(304);
  });
});
