/** How POST /tools/invoke turns a body's parsed calls into its answer. */
import { answered } from '../formats/answer.ts';
import type { Format, ParsedCalls } from '../formats/types.ts';
import type { Dispatcher, InvocationScope } from '../tools/invoke.ts';

/** The answer to the calls of a body, as POST /tools/invoke sends it (one result, or results + messages), content cut at `maxContentChars`. */
export async function answerCalls(
  dispatcher: Dispatcher,
  format: Format,
  parsed: ParsedCalls,
  scope: InvocationScope,
  maxContentChars: number,
): Promise<object> {
  // The content and the provider-native message are added in place (results are made per request).
  if (!parsed.turn) {
    const call = parsed.calls[0]!;
    const result = answered(await dispatcher.invoke(call, scope), maxContentChars);
    result.tool_message = format.toolMessage(result, call);
    return result;
  }
  const results = (await Promise.all(parsed.calls.map((call) => dispatcher.invoke(call, scope)))).map((result) => answered(result, maxContentChars));
  results.forEach((result, i) => (result.tool_message = format.toolMessage(result, parsed.calls[i])));
  return { results, messages: format.turnMessages(results, parsed.calls) };
}
