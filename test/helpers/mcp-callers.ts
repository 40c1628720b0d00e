/** MCP clients for the relay tests: the official SDK v1 client declaring sampling and elicitation, answering both. */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export const INFO = { name: 'toolport-test', version: '1.0.0' };
export const COMPLETION = { role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'test-model', stopReason: 'endTurn' } as const;
export const ANSWER = { action: 'accept', content: { name: 'Ada Lovelace' } } as const;

export type Asked = { method: string; params: Record<string, any> };

/** An SDK v1 client on /mcp that declares sampling and elicitation and answers both, noting what it was asked. */
export async function answeringClient(url: URL, asked: Asked[]): Promise<ClientV1> {
  const client = new ClientV1(INFO, { capabilities: { sampling: {}, elicitation: { form: {} } } });
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    asked.push(request as Asked);
    return COMPLETION;
  });
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request as Asked);
    const schema = (request.params as { requestedSchema?: { properties?: Record<string, unknown> } }).requestedSchema;
    return schema?.properties?.interpretation === undefined ? ANSWER : { action: 'accept', content: { interpretation: 'programming' } };
  });
  await client.connect(new TransportV1(url));
  return client;
}

export function textOf(result: Record<string, unknown>): string {
  return ((result.content ?? []) as { type: string; text?: string }[]).map((block) => block.text ?? '').join('\n');
}
