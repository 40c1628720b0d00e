/**
 * An agent loop with the official `openai` package (Chat Completions): the model asks for tool
 * calls, toolport runs the whole turn, its `messages` are appended, until the model answers.
 * In your project: `import { ToolportClient } from 'toolport/client'`.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ToolportClient } from '../../src/client/index.ts';

export async function chatLoop(openai: OpenAI, toolport: ToolportClient, model: string, prompt: string, maxTurns = 8): Promise<string> {
  const { tools } = await toolport.listTools({ format: 'openai' });
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: prompt }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const completion = await openai.chat.completions.create({ model, messages, tools: tools as unknown as ChatCompletionTool[] });
    const message = completion.choices[0]!.message;
    messages.push(message);
    if (!message.tool_calls?.length) return message.content ?? '';
    const answer = await toolport.invokeTurn(message, { format: 'openai' });
    messages.push(...(answer.messages as ChatCompletionMessageParam[]));
  }
  throw new Error(`no answer after ${maxTurns} turns`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const toolport = new ToolportClient({
    baseUrl: process.env.TOOLPORT_URL ?? 'http://127.0.0.1:8080',
    ...(process.env.TOOLPORT_API_KEY && { apiKey: process.env.TOOLPORT_API_KEY }),
  });
  console.log(await chatLoop(new OpenAI(), toolport, process.env.MODEL ?? 'gpt-4.1-mini', process.argv[2] ?? 'What is 2 + 3? Use the add tool.'));
}
