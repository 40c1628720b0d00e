/**
 * An agent loop in code mode with the official `openai` package (Chat Completions): the model is
 * given only `code_api` and `code_run` (toolport started with CODE_MODE=true), looks up the tools it
 * needs as TypeScript declarations, then writes one program that calls them. Every call the program
 * makes goes through toolport's pipeline as a call of this caller (docs/code-mode.md).
 * In your project: `import { ToolportClient } from 'toolport/client'`.
 */
import OpenAI from 'openai';
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions';
import { ToolportClient } from '../../src/client/index.ts';

const CODE_TOOLS = ['code_api', 'code_run'];

export async function codeModeLoop(openai: OpenAI, toolport: ToolportClient, model: string, prompt: string, maxTurns = 8): Promise<string> {
  const { tools } = await toolport.listTools({ format: 'openai' });
  // Two definitions, whatever the size of the catalog (a `code_mode: true` toolset lists only these two).
  const codeTools = (tools as unknown as ChatCompletionTool[]).filter((t) => t.type === 'function' && CODE_TOOLS.includes(t.function.name));
  const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: prompt }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const completion = await openai.chat.completions.create({ model, messages, tools: codeTools });
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
  const prompt = process.argv[2] ?? 'Add 2 and 3, then add 10 to the sum, with the calculator tools, in one program.';
  console.log(await codeModeLoop(new OpenAI(), toolport, process.env.MODEL ?? 'gpt-4.1-mini', prompt));
}
