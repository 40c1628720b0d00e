/** The formats toolport speaks, and how a body's format is found. Adding a provider = adding a file here. */
import { InvalidQuery, NoToolCall } from '../errors.ts';
import { nativeFormat } from './native.ts';
import type { Format } from './types.ts';

export type { Format, ParsedCalls } from './types.ts';

const FORMATS: readonly Format[] = [nativeFormat];
/** Formats whose shape is indistinguishable from another's are only used when asked for by name. */
const EXPLICIT_ONLY = new Set<string>(['mcp']);

export const FORMAT_NAMES = FORMATS.map((f) => f.name);

export function formatByName(name: string): Format {
  const format = FORMATS.find((f) => f.name === name);
  if (format === undefined) throw new InvalidQuery(`format must be one of ${FORMAT_NAMES.join(', ')}, got "${name.slice(0, 64)}"`);
  return format;
}

export function detectFormat(body: unknown): Format {
  const format = FORMATS.find((f) => !EXPLICIT_ONLY.has(f.name) && f.detect(body));
  if (format === undefined) {
    throw new NoToolCall(
      'no recognisable tool call. Accepted shapes: native {"name","arguments","id"?} or {"calls":[…]}',
    );
  }
  return format;
}
