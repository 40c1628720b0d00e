/**
 * result_read (docs/large-results.md): lets the model page through a large result that was cut, by the
 * toolport://results/<id> URI the cut notice named. Only the caller that made the call reads it.
 */
import { RESULT_URI_PATTERN, resultIdOf, type ResultResources } from '../store/results.ts';
import { error, ok } from '../tools/define.ts';
import type { ToolDefinition } from '../tools/types.ts';

const DEFAULT_LENGTH = 20_000;
/** Room kept in `content` for the line that says where the page is. */
const HEADER_ROOM = 200;

interface Page {
  uri: string;
  offset: number;
  length: number;
  chars: number;
  next_offset: number | null;
  text: string;
}

export function resultReadTool(results: ResultResources): ToolDefinition<{ uri: string; offset?: number; length?: number }, Page> {
  // A page always fits in the content the model sees, so reading never makes another large result.
  const longest = Math.max(1, results.maxContentChars - HEADER_ROOM);
  return {
    name: 'result_read',
    description: 'Read part of a large tool result that was cut: its toolport://results/<id> URI, from offset (default 0), up to length characters.',
    parameters: {
      type: 'object',
      properties: {
        uri: { type: 'string', pattern: RESULT_URI_PATTERN, description: 'the toolport://results/<id> URI the cut result named' },
        offset: { type: 'integer', minimum: 0, description: 'the first character to read (default 0)' },
        length: { type: 'integer', minimum: 1, description: `how many characters to read (default ${DEFAULT_LENGTH}; at most ${longest})` },
      },
      required: ['uri'],
    },
    result: {
      type: 'object',
      properties: {
        uri: { type: 'string' },
        offset: { type: 'integer' },
        length: { type: 'integer' },
        chars: { type: 'integer' },
        next_offset: { type: ['integer', 'null'] },
        text: { type: 'string' },
      },
      required: ['uri', 'offset', 'length', 'chars', 'next_offset', 'text'],
    },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: async ({ uri, offset = 0, length = DEFAULT_LENGTH }, context) => {
      const kept = await results.read(resultIdOf(uri)!, context.caller);
      if (kept === null) return error(`No result at ${uri}: results are kept for a limited time after the call, and only for the caller that made it.`);
      const chars = kept.content.length;
      if (offset >= chars && chars > 0) return error(`Offset ${offset} is past the end: the result has ${chars} characters (offsets 0–${chars - 1}).`);
      let end = Math.min(chars, offset + Math.min(length, longest));
      const last = kept.content.charCodeAt(end - 1);
      if (end < chars && end - 1 > offset && last >= 0xd800 && last <= 0xdbff) end--; // never split a surrogate pair
      const text = kept.content.slice(offset, end);
      const next = end < chars ? end : null;
      const where = next === null ? 'the end' : `continue with offset ${next}`;
      const page: Page = { uri, offset, length: text.length, chars, next_offset: next, text };
      // The text goes to the model once, in the message; the value carries it for programs.
      return { ...ok(page, `Characters ${offset}–${end} of ${chars} of ${uri} (${where}):\n\n${text}`), exclude_value_from_context: true };
    },
  };
}
