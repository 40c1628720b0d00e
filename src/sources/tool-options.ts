/**
 * The tool options (docs/plugins.md) a tools file may set for forwarded tools — on an HTTP tool, on a whole
 * OpenAPI or MCP source, and per tool under a source's `tools:` — checked here for shape; the
 * registry checks their values as for any plugin's tool.
 */
import type { IdempotencyConfig, ToolAnnotations } from '../tools/types.ts';
import { isObject } from '../json.ts';
import type { EntryReader, JsonObject } from './entry.ts';

export interface ToolOptions {
  idempotency?: IdempotencyConfig;
  on_lost?: 'rerun' | 'unknown';
  annotations?: ToolAnnotations;
  timeout_ms?: number;
}

export const TOOL_OPTION_KEYS = ['idempotency', 'on_lost', 'annotations', 'timeout_ms'] as const;

/** The options found in `object` (the entry itself, or one of its `tools:` overrides), `at` naming it in errors. */
export function readToolOptions(reader: EntryReader, object: JsonObject, at = ''): ToolOptions {
  const options: ToolOptions = {};
  const { idempotency, on_lost, annotations, timeout_ms } = object;
  if (on_lost !== undefined) {
    if (on_lost !== 'rerun' && on_lost !== 'unknown') reader.fail(`${at}on_lost must be rerun or unknown`);
    options.on_lost = on_lost;
  }
  if (idempotency !== undefined) {
    if (!isObject(idempotency)) reader.fail(`${at}idempotency must be a mapping`);
    if (idempotency.strategy === 'custom' || idempotency.key !== undefined) {
      reader.fail(`${at}idempotency.strategy "custom" needs a key function, which only a plugin can give: use auto or params`);
    }
    options.idempotency = idempotency as unknown as IdempotencyConfig;
  }
  if (annotations !== undefined) {
    if (!isObject(annotations)) reader.fail(`${at}annotations must be a mapping`);
    options.annotations = annotations as ToolAnnotations;
  }
  if (timeout_ms !== undefined) {
    if (!Number.isInteger(timeout_ms) || (timeout_ms as number) < 1) reader.fail(`${at}timeout_ms must be a positive whole number`);
    options.timeout_ms = timeout_ms as number;
  }
  return options;
}

/**
 * A source's `tools: {<upstream name>: {idempotency?, timeout_ms?, annotations?}}`, each checked.
 * The caller checks that every name it holds exists upstream (where the list is known at start).
 */
export function readToolOverrides(reader: EntryReader): Map<string, ToolOptions> {
  const overrides = new Map<string, ToolOptions>();
  const tools = reader.optionalObject('tools');
  if (tools === undefined) return overrides;
  for (const [name, value] of Object.entries(tools)) {
    if (!isObject(value)) reader.fail(`tools.${name} must be a mapping`);
    const unknown = Object.keys(value).find((k) => !(TOOL_OPTION_KEYS as readonly string[]).includes(k));
    if (unknown !== undefined) reader.fail(`tools.${name}.${unknown} is not one of ${TOOL_OPTION_KEYS.join(', ')}`);
    overrides.set(name, readToolOptions(reader, value, `tools.${name}.`));
  }
  return overrides;
}

/** HTTP and OpenAPI tools forward the ledger key as Idempotency-Key, so their upstream deduplicates: a lost run is re-run unless the tools file says otherwise. */
export function rerunByDefault(options: ToolOptions): ToolOptions {
  return options.idempotency !== undefined && options.on_lost === undefined ? { ...options, on_lost: 'rerun' } : options;
}
