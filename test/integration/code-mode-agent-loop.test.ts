/**
 * examples/agent-loop/code-mode.ts end to end: the official openai SDK against a scripted model
 * that looks the tools up with code_api and runs one program with code_run; toolport (the real
 * app on a port, CODE_MODE=true) runs the program and each of its calls.
 */
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeModeLoop } from '../../examples/agent-loop/code-mode.ts';
import { ToolportClient } from '../../src/client/index.ts';
import { makeApp } from '../helpers/app.ts';
import { startScriptedCodeModel, type ScriptedCodeModel } from '../helpers/scripted-code-model.ts';

let app: FastifyInstance;
let model: ScriptedCodeModel;
let url: string;

beforeAll(async () => {
  app = await makeApp('memory', { env: { TOOL_PLUGINS: 'examples/plugins/calculator.ts', CODE_MODE: 'true' } });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  model = await startScriptedCodeModel();
});
afterAll(async () => {
  await model?.close();
  await app?.close();
});

describe('an agent loop in code mode', () => {
  it('gives the model two tools, answers code_api with declarations and code_run with the program’s value and calls', async () => {
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${model.baseUrl}/v1`, maxRetries: 0 });
    const answer = await codeModeLoop(openai, new ToolportClient({ baseUrl: url }), 'gpt-test', 'Add 2 and 3, then 10.');
    expect(model.requests).toHaveLength(3);
    expect(model.requests[0]!.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(['code_api', 'code_run']);
    const api = model.requests[1]!.messages.at(-1);
    expect(api).toMatchObject({ role: 'tool', tool_call_id: 'call_api' });
    expect(api.content).toContain('add(args: {');
    expect(api.content).toContain('Promise<{ sum: number }>');
    expect(answer).toMatch(/^The program said: The program returned \(2 tool calls\)\./);
    const result = JSON.parse(answer.slice(answer.indexOf('{'))) as Record<string, any>;
    expect(result).toMatchObject({
      value: 15,
      logs: [],
      calls: [
        { name: 'add', success: true },
        { name: 'add', success: true },
      ],
    });
  });
});
