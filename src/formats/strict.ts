/**
 * OpenAI strict mode (Structured Outputs) takes a subset of JSON Schema: every object closed with
 * `additionalProperties: false` and every property required, only the keywords listed in OpenAI's
 * "Supported schemas" guide, at most 10 levels of nesting and 5000 properties. A schema outside it
 * is served without `strict`, because OpenAI refuses the whole request otherwise.
 */
import type { JsonSchema } from '../tools/types.ts';
import { isObject } from '../json.ts';

const COMMON = ['type', 'description', 'title', 'enum', 'anyOf', '$ref', '$defs', 'definitions'];
const BY_TYPE: Record<string, string[]> = {
  object: ['properties', 'required', 'additionalProperties'],
  array: ['items', 'minItems', 'maxItems'],
  string: ['pattern', 'format'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  boolean: [],
  null: [],
};
const STRING_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const MAX_DEPTH = 10;
const MAX_PROPERTIES = 5000;

interface Budget {
  properties: number;
}

function typesOf(schema: JsonSchema): string[] | null {
  if (typeof schema.type === 'string') return [schema.type];
  if (Array.isArray(schema.type) && schema.type.every((t) => typeof t === 'string')) return schema.type as string[];
  return null;
}

function subschemaOk(schema: unknown, depth: number, budget: Budget): boolean {
  if (!isObject(schema) || depth > MAX_DEPTH) return false;
  if ('$ref' in schema) return typeof schema.$ref === 'string' && Object.keys(schema).every((k) => k === '$ref' || k === 'description');
  if ('anyOf' in schema) {
    return (
      Array.isArray(schema.anyOf) &&
      schema.anyOf.every((s) => subschemaOk(s, depth + 1, budget)) &&
      Object.keys(schema).every((k) => ['anyOf', 'description', 'title'].includes(k))
    );
  }
  const types = typesOf(schema);
  if (types === null || types.some((t) => !(t in BY_TYPE))) return false;
  const allowed = new Set([...COMMON, ...types.flatMap((t) => BY_TYPE[t] ?? [])]);
  if (Object.keys(schema).some((k) => !allowed.has(k))) return false;
  if (typeof schema.format === 'string' && !STRING_FORMATS.has(schema.format)) return false;
  if (!definitionsOk(schema, depth, budget)) return false;
  if (types.includes('object') && !objectOk(schema, depth, budget)) return false;
  if ('items' in schema && !subschemaOk(schema.items, depth + 1, budget)) return false;
  return true;
}

function objectOk(schema: JsonSchema, depth: number, budget: Budget): boolean {
  if (schema.additionalProperties !== false) return false;
  const properties = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(properties);
  budget.properties += names.length;
  if (budget.properties > MAX_PROPERTIES) return false;
  const required = Array.isArray(schema.required) ? schema.required : [];
  if (names.length !== required.length || !names.every((n) => required.includes(n))) return false;
  return names.every((n) => subschemaOk(properties[n], depth + 1, budget));
}

function definitionsOk(schema: JsonSchema, depth: number, budget: Budget): boolean {
  for (const key of ['$defs', 'definitions']) {
    const defs = schema[key];
    if (defs === undefined) continue;
    if (!isObject(defs) || !Object.values(defs).every((d) => subschemaOk(d, depth + 1, budget))) return false;
  }
  return true;
}

/** Whether OpenAI accepts this parameters schema with `strict: true` (the root must be an object, not anyOf). */
export function qualifiesForStrict(parameters: JsonSchema): boolean {
  return parameters.type === 'object' && !('anyOf' in parameters) && subschemaOk(parameters, 1, { properties: 0 });
}
