/**
 * A tools/call result checked as the SDK's `CallToolResultSchema` checks it, without running zod for
 * the common answer: text blocks, structured content and `isError` are checked by hand; anything
 * else (other blocks, annotations, `_meta`, other fields, no `content`) goes through the schema, and
 * a result the schema refuses throws its ZodError, as the SDK Client would have.
 */
import { CallToolResultSchema, ResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isObject } from '../../json.ts';

/** The result schema handed to `Client.callTool`: the SDK's own check that the answer is a result; `checkCallToolResult` does the rest. */
export const ANY_RESULT = ResultSchema as unknown as typeof CallToolResultSchema;

/** `type: 'text'` and a string `text`, nothing else: a block zod would pass unchanged. */
function isPlainText(block: unknown): boolean {
  if (!isObject(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
  for (const key in block) if (key !== 'type' && key !== 'text') return false;
  return true;
}

function isPlainResult(result: Record<string, unknown>): boolean {
  if (!Array.isArray(result.content)) return false;
  for (const key in result) {
    const value = result[key];
    if (key === 'content') {
      if (!(value as unknown[]).every(isPlainText)) return false;
    } else if (key === 'structuredContent') {
      if (!isObject(value)) return false;
    } else if (key !== 'isError' || typeof value !== 'boolean') return false;
  }
  return true;
}

export function checkCallToolResult(result: unknown): CallToolResult {
  return isObject(result) && isPlainResult(result) ? (result as CallToolResult) : CallToolResultSchema.parse(result);
}
