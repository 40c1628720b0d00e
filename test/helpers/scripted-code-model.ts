/**
 * A local Chat Completions server that plays a model in code mode, three turns: it asks code_api
 * for the tools of the task, then runs a program with code_run, then answers with the text of the
 * program's result it was sent back (so a test sees the whole loop).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CODE_MODE_PROGRAM = 'const first = await tools.add({ a: 2, b: 3 });\nconst second = await tools.add({ a: first.sum, b: 10 });\nreturn second.sum;';

export interface ScriptedCodeModel {
  baseUrl: string;
  requests: Record<string, any>[];
  close(): Promise<void>;
}

function toolCall(id: string, name: string, args: unknown) {
  return { role: 'assistant', content: null, refusal: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
}

function turn(body: Record<string, any>): unknown {
  const results = (body.messages as { role: string; content: string }[]).filter((m) => m.role === 'tool');
  const message =
    results.length === 0
      ? toolCall('call_api', 'code_api', { query: 'add two numbers' })
      : results.length === 1
        ? toolCall('call_run', 'code_run', { code: CODE_MODE_PROGRAM })
        : { role: 'assistant', content: `The program said: ${results.at(-1)!.content}`, refusal: null };
  const done = results.length >= 2;
  return {
    id: `chatcmpl-${results.length}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: done ? 'stop' : 'tool_calls', logprobs: null }],
  };
}

export async function startScriptedCodeModel(): Promise<ScriptedCodeModel> {
  const requests: Record<string, any>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
      requests.push(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(turn(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
