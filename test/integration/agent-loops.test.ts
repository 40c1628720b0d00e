/**
 * examples/agent-loop/ end to end: the official SDKs, unchanged but for baseURL, against a local
 * scripted model server; toolport (the real app on a port) runs the calls; the loop appends the
 * tool messages until the model answers. And the Python loop over the raw HTTP API.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import Anthropic from '@anthropic-ai/sdk';
import type { FastifyInstance } from 'fastify';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicLoop } from '../../examples/agent-loop/anthropic.ts';
import { chatLoop } from '../../examples/agent-loop/openai-chat.ts';
import { responsesLoop } from '../../examples/agent-loop/openai-responses.ts';
import { ToolportClient } from '../../src/client/index.ts';
import { makeApp } from '../helpers/app.ts';
import { startScriptedModels, type ScriptedModels } from '../helpers/scripted-models.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ANSWER = 'The tool said: 2 + 3 = 5\n\n{"sum":5}';

let app: FastifyInstance;
let toolport: ToolportClient;
let url: string;
let models: ScriptedModels;

beforeAll(async () => {
  app = await makeApp('memory', { env: { TOOL_PLUGINS: 'examples/plugins/calculator.ts' } });
  url = await app.listen({ port: 0, host: '127.0.0.1' });
  toolport = new ToolportClient({ baseUrl: url });
  models = await startScriptedModels();
});
afterAll(async () => {
  await models?.close();
  await app?.close();
});

describe('agent loops', () => {
  it('openai Chat Completions: tool_calls → toolport → role "tool" messages → the answer', async () => {
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${models.baseUrl}/v1`, maxRetries: 0 });
    expect(await chatLoop(openai, toolport, 'gpt-test', 'What is 2 + 3?')).toBe(ANSWER);
    const sent = models.requests.filter((r) => r.path === '/v1/chat/completions');
    expect(sent).toHaveLength(2);
    expect(sent[0]!.body.tools.some((t: { function: { name: string } }) => t.function.name === 'add')).toBe(true);
    expect(sent[1]!.body.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '2 + 3 = 5\n\n{"sum":5}' });
  });

  it('openai Responses: function_call items → toolport → function_call_output items → the answer', async () => {
    const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${models.baseUrl}/v1`, maxRetries: 0 });
    expect(await responsesLoop(openai, toolport, 'gpt-test', 'What is 2 + 3?')).toBe(ANSWER);
    const sent = models.requests.filter((r) => r.path === '/v1/responses');
    expect(sent[1]!.body.input.at(-1)).toMatchObject({ type: 'function_call_output', call_id: 'call_1' });
  });

  it('@anthropic-ai/sdk: tool_use blocks → toolport → one user message of tool_result blocks → the answer', async () => {
    const anthropic = new Anthropic({ apiKey: 'sk-ant-test', baseURL: models.baseUrl, maxRetries: 0 });
    expect(await anthropicLoop(anthropic, toolport, 'claude-test', 'What is 2 + 3?')).toBe(ANSWER);
    const sent = models.requests.filter((r) => r.path === '/v1/messages');
    expect(sent[1]!.body.messages.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', is_error: false }] });
  });

  it('Python, with the Python client over the raw Chat Completions API', async () => {
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        'python3',
        ['examples/agent-loop/python_loop.py', 'What is 2 + 3?'],
        {
          cwd: ROOT,
          env: {
            PATH: process.env.PATH ?? '',
            PYTHONPATH: 'clients/python',
            TOOLPORT_URL: url,
            MODEL_URL: `${models.baseUrl}/v1`,
            MODEL_KEY: 'sk-test',
            MODEL: 'gpt-test',
          },
          timeout: 60_000,
        },
        (err, stdout, stderr) => (err === null ? resolve(stdout) : reject(new Error(stderr))),
      );
    });
    expect(output).toBe(`${ANSWER}\n`);
  }, 60_000);
});
