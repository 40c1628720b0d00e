/**
 * A local model server speaking OpenAI's Chat Completions and Responses and Anthropic's Messages,
 * with a script of two turns: first it asks for `add {a: 2, b: 3}`, then it answers with the
 * text of the tool result it was sent back (so a test sees that the loop appended it).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedModels {
  baseUrl: string;
  /** Every request body, by path. */
  requests: { path: string; body: Record<string, any> }[];
  close(): Promise<void>;
}

const now = () => Math.floor(Date.now() / 1000);

function chat(body: Record<string, any>): unknown {
  const last = body.messages.at(-1);
  const message =
    last.role === 'tool'
      ? { role: 'assistant', content: `The tool said: ${last.content}`, refusal: null }
      : {
          role: 'assistant',
          content: null,
          refusal: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
        };
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: now(),
    model: body.model,
    choices: [{ index: 0, message, finish_reason: last.role === 'tool' ? 'stop' : 'tool_calls', logprobs: null }],
  };
}

function responses(body: Record<string, any>): unknown {
  const last = body.input.at(-1);
  const output =
    last.type === 'function_call_output'
      ? [
          {
            type: 'message',
            id: 'msg_1',
            role: 'assistant',
            status: 'completed',
            content: [{ type: 'output_text', text: `The tool said: ${last.output}`, annotations: [] }],
          },
        ]
      : [{ type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'add', arguments: '{"a":2,"b":3}', status: 'completed' }];
  return {
    id: 'resp_1',
    object: 'response',
    created_at: now(),
    model: body.model,
    status: 'completed',
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    temperature: 1,
    top_p: 1,
  };
}

function messages(body: Record<string, any>): unknown {
  const last = body.messages.at(-1);
  const result = Array.isArray(last.content) ? last.content.find((block: { type: string }) => block.type === 'tool_result') : undefined;
  const content =
    result !== undefined
      ? [{ type: 'text', text: `The tool said: ${result.content}` }]
      : [{ type: 'tool_use', id: 'toolu_1', name: 'add', input: { a: 2, b: 3 } }];
  return {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: body.model,
    content,
    stop_reason: result !== undefined ? 'end_turn' : 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
}

const ROUTES: Record<string, (body: Record<string, any>) => unknown> = { '/v1/chat/completions': chat, '/v1/responses': responses, '/v1/messages': messages };

export async function startScriptedModels(): Promise<ScriptedModels> {
  const requests: ScriptedModels['requests'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0]!;
      const route = ROUTES[path];
      if (route === undefined || req.method !== 'POST') return res.writeHead(404).end();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, any>;
      requests.push({ path, body });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route(body)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
