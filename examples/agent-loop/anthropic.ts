/** The loop with the official `@anthropic-ai/sdk`: tool_use blocks in, one user message of tool_result blocks appended. */
import Anthropic from '@anthropic-ai/sdk';
import type { MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages';
import { ToolportClient } from '../../src/client/index.ts';

export async function anthropicLoop(anthropic: Anthropic, toolport: ToolportClient, model: string, prompt: string, maxTurns = 8): Promise<string> {
  const { tools } = await toolport.listTools({ format: 'anthropic' });
  const messages: MessageParam[] = [{ role: 'user', content: prompt }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const reply = await anthropic.messages.create({ model, max_tokens: 1024, messages, tools: tools as unknown as Tool[] });
    messages.push({ role: 'assistant', content: reply.content });
    if (reply.stop_reason !== 'tool_use') return reply.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
    const answer = await toolport.invokeTurn({ role: 'assistant', content: reply.content }, { format: 'anthropic' });
    messages.push(...(answer.messages as MessageParam[]));
  }
  throw new Error(`no answer after ${maxTurns} turns`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const toolport = new ToolportClient({
    baseUrl: process.env.TOOLPORT_URL ?? 'http://127.0.0.1:8080',
    ...(process.env.TOOLPORT_API_KEY && { apiKey: process.env.TOOLPORT_API_KEY }),
  });
  console.log(await anthropicLoop(new Anthropic(), toolport, process.env.MODEL ?? 'claude-sonnet-4-5', process.argv[2] ?? 'What is 2 + 3? Use the add tool.'));
}
