/** The formats toolport speaks, and how a body's format is found. Adding a provider = adding a file here. */
import { InvalidQuery, NoToolCall } from '../errors.ts';
import { anthropicFormat } from './anthropic.ts';
import { geminiFormat } from './gemini.ts';
import { mcpFormat } from './mcp.ts';
import { nativeFormat } from './native.ts';
import { openaiResponsesFormat } from './openai-responses.ts';
import { openaiFormat } from './openai.ts';
import type { Format, ParsedCalls, ToolChoice } from './types.ts';

export type { Format, ParsedCalls, ToolChoice } from './types.ts';

const FORMATS: readonly Format[] = [nativeFormat, openaiFormat, openaiResponsesFormat, anthropicFormat, geminiFormat, mcpFormat];
/** Formats whose shape is indistinguishable from another's are only used when asked for by name. */
const EXPLICIT_ONLY = new Set<string>(['mcp']);
const DETECTED = FORMATS.filter((f) => !EXPLICIT_ONLY.has(f.name));

export const FORMAT_NAMES = FORMATS.map((f) => f.name);
const ACCEPTED = FORMATS.map((f) => f.shapes).join('; ');

export function formatByName(name: string): Format {
  const format = FORMATS.find((f) => f.name === name);
  if (format === undefined) throw new InvalidQuery(`format must be one of ${FORMAT_NAMES.join(', ')}, got "${name.slice(0, 64)}"`);
  return format;
}

/** The one format whose shape the body has; none or several is a 400 naming every accepted shape. */
export function detectFormat(body: unknown): Format {
  let found: Format | undefined;
  let count = 0;
  for (const format of DETECTED) {
    if (format.detect(body)) {
      found ??= format;
      count++;
    }
  }
  if (count === 1) return found!;
  if (count === 0) throw new NoToolCall(`no recognisable tool call. Accepted shapes: ${ACCEPTED}`);
  const matches = DETECTED.filter((f) => f.detect(body));
  throw new NoToolCall(
    `the body has the shape of several formats (${matches.map((f) => f.name).join(', ')}); name one with ?format=. Accepted shapes: ${ACCEPTED}`,
  );
}

/** The calls of a body, in the format named by ?format= or else the detected one. */
export function parseCalls(body: unknown, formatName: string | undefined): { format: Format; parsed: ParsedCalls } {
  if (formatName === undefined) {
    const format = detectFormat(body);
    return { format, parsed: format.parse(body) };
  }
  const format = formatByName(formatName);
  if (!format.detect(body)) throw new NoToolCall(`the body is not a ${format.name} tool call. Accepted shapes: ${format.shapes}`);
  return { format, parsed: format.parse(body) };
}

/** `?tool_choice=auto|none|required|<tool name>`; a name must be one of the listed tools. */
export function parseToolChoice(raw: string, toolNames: readonly string[]): ToolChoice {
  if (raw === 'auto' || raw === 'none' || raw === 'required') return { mode: raw };
  if (toolNames.includes(raw)) return { mode: 'tool', name: raw };
  throw new InvalidQuery(`tool_choice must be auto, none, required or the name of a listed tool, got "${raw.slice(0, 64)}"`);
}
