/**
 * Tool names made from upstream names (docs/tool-sources.md): lower case, every character outside
 * `[a-z0-9_-]` replaced by `_`, at most 64 characters — a longer name is cut and ends with `_`
 * and a short hash of the whole uncut name, so two long names that share a beginning stay apart.
 * The original name is what is sent upstream; only the catalog sees this one.
 */
import { createHash } from 'node:crypto';

export const MAX_TOOL_NAME = 64;
const HASH_CHARS = 8;

/** `<source>_<upstream name>` made valid; `source` null = the upstream name alone. */
export function toolNameFor(source: string | null, upstreamName: string): string {
  const whole = source === null ? upstreamName : `${source}_${upstreamName}`;
  const cleaned = whole.toLowerCase().replace(/[^a-z0-9_-]/g, '_');
  const name = cleaned === '' ? '_' : cleaned;
  if (name.length <= MAX_TOOL_NAME) return name;
  const suffix = createHash('sha256').update(whole).digest('hex').slice(0, HASH_CHARS);
  return `${name.slice(0, MAX_TOOL_NAME - HASH_CHARS - 1)}_${suffix}`;
}

/** A source's own name (the prefix of its tools): what a tool name may hold, short enough to leave room. */
export const SOURCE_NAME = /^[a-z0-9][a-z0-9_-]{0,31}$/;
