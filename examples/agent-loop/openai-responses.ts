/** The same loop over the Responses API: function_call items in, function_call_output items appended. */
import OpenAI from 'openai';
import type { ResponseInputItem, Tool } from 'openai/resources/responses/responses';
import { ToolportClient } from '../../src/client/index.ts';

export async function responsesLoop(openai: OpenAI, toolport: ToolportClient, model: string, prompt: string, maxTurns = 8): Promise<string> {
  const { tools } = await toolport.listTools({ format: 'openai-responses' });
  const input: ResponseInputItem[] = [{ role: 'user', content: prompt }];
  for (let turn = 0; turn < maxTurns; turn++) {
    const response = await openai.responses.create({ model, input, tools: tools as unknown as Tool[] });
    if (!response.output.some((item) => item.type === 'function_call')) return response.output_text;
    input.push(...(response.output as ResponseInputItem[]));
    const answer = await toolport.invokeTurn({ output: response.output }, { format: 'openai-responses' });
    input.push(...(answer.messages as ResponseInputItem[]));
  }
  throw new Error(`no answer after ${maxTurns} turns`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const toolport = new ToolportClient({
    baseUrl: process.env.TOOLPORT_URL ?? 'http://127.0.0.1:8080',
    ...(process.env.TOOLPORT_API_KEY && { apiKey: process.env.TOOLPORT_API_KEY }),
  });
  console.log(await responsesLoop(new OpenAI(), toolport, process.env.MODEL ?? 'gpt-4.1-mini', process.argv[2] ?? 'What is 2 + 3? Use the add tool.'));
}
