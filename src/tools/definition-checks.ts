/** The parts of a tool definition checked on their own: annotations and the idempotency strategy. */
import { ToolDefinitionError } from '../errors.ts';
import { isObject } from '../json.ts';
import type { IdempotencyConfig, JsonSchema, ToolAnnotations } from './types.ts';

const DEFAULT_TTL_S = 86400;

export interface NormalizedIdempotency {
  strategy: IdempotencyConfig['strategy'];
  param_keys?: string[];
  ttl_s: number | null;
  scope: 'session' | 'global' | 'key' | 'user';
  /**
   * What the next identical call does after a run's lease lapsed without a record (docs/ledger.md):
   * `rerun`, or `unknown` (answer outcome_unknown until an admin resolves it).
   */
  on_lost: 'rerun' | 'unknown';
}

/** Stops the start naming the source and the tool. */
export function fail(source: string, name: unknown, problem: string, kind: new (message: string) => Error = ToolDefinitionError): never {
  const tool = typeof name === 'string' && name !== '' ? `tool "${name}"` : 'a tool';
  throw new kind(`${source}: ${tool}: ${problem}`);
}

const ANNOTATION_KEYS = ['read_only', 'destructive', 'idempotent', 'open_world'];

export function checkAnnotations(source: string, name: string, annotations: unknown): ToolAnnotations | null {
  if (annotations === undefined) return null;
  if (!isObject(annotations)) fail(source, name, 'annotations must be an object');
  for (const [key, value] of Object.entries(annotations)) {
    if (!ANNOTATION_KEYS.includes(key)) fail(source, name, `annotations.${key} is not one of ${ANNOTATION_KEYS.join(', ')}`);
    if (typeof value !== 'boolean') fail(source, name, `annotations.${key} must be true or false`);
  }
  return annotations as ToolAnnotations;
}

/**
 * `on_lost` as declared, or its default: `rerun` for a tool annotated idempotent, `unknown` for the
 * rest (HTTP and OpenAPI sources declare `rerun`: their upstream deduplicates by Idempotency-Key).
 */
function checkOnLost(source: string, name: string, onLost: unknown, annotations: ToolAnnotations | null): NormalizedIdempotency['on_lost'] {
  if (onLost === undefined) return annotations?.idempotent === true ? 'rerun' : 'unknown';
  if (onLost !== 'rerun' && onLost !== 'unknown') fail(source, name, 'on_lost must be rerun or unknown');
  return onLost;
}

export function checkIdempotency(
  source: string,
  name: string,
  config: unknown,
  parameters: JsonSchema,
  onLost?: unknown,
  annotations: ToolAnnotations | null = null,
): { normalized: NormalizedIdempotency | null; keyFunction: IdempotencyConfig['key'] | null } {
  if (config === undefined) {
    if (onLost !== undefined) fail(source, name, 'on_lost needs an idempotency strategy: only the ledger loses runs');
    return { normalized: null, keyFunction: null };
  }
  if (!isObject(config)) fail(source, name, 'idempotency must be an object');
  const { strategy, param_keys, key, ttl_s, scope = 'session' } = config;
  if (!['auto', 'params', 'custom', 'none'].includes(strategy as string)) {
    fail(source, name, 'idempotency.strategy must be auto, params, custom or none');
  }
  if (!['session', 'global', 'key', 'user'].includes(scope as string)) fail(source, name, 'idempotency.scope must be session, global, key or user');
  if (ttl_s !== undefined && ttl_s !== null && !(Number.isInteger(ttl_s) && (ttl_s as number) >= 1)) {
    fail(source, name, 'idempotency.ttl_s must be a positive whole number of seconds, or null for never');
  }
  const declared = isObject(parameters.properties) ? Object.keys(parameters.properties) : [];
  if (strategy === 'params') {
    const keys = param_keys as unknown;
    if (keys === undefined)
      fail(
        source,
        name,
        'idempotency.param_keys is required with strategy "params": list the parameters that identify the call (or use strategy "auto" for all of them)',
      );
    if (!Array.isArray(keys) || keys.length === 0 || !keys.every((k) => typeof k === 'string' && declared.includes(k))) {
      fail(source, name, 'idempotency.param_keys must list declared parameters when strategy is "params"');
    }
  }
  if (strategy === 'custom' && typeof key !== 'function') fail(source, name, 'idempotency.key must be a function when strategy is "custom"');
  const normalized: NormalizedIdempotency = {
    strategy: strategy as NormalizedIdempotency['strategy'],
    ttl_s: ttl_s === undefined ? DEFAULT_TTL_S : (ttl_s as number | null),
    scope: scope as NormalizedIdempotency['scope'],
    on_lost: checkOnLost(source, name, onLost, annotations),
  };
  if (strategy === 'params') normalized.param_keys = [...(param_keys as string[])];
  return { normalized, keyFunction: strategy === 'custom' ? (key as IdempotencyConfig['key']) : null };
}
