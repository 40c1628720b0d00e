/**
 * A tool's JSON Schema as a Gemini `Schema` (an OpenAPI 3.0 subset): only the fields Gemini's own
 * `Schema` type declares survive; the rest (additionalProperties, $ref, const, allOf, not,
 * if/then/else, exclusive bounds, …) is refused by the API, so it is resolved or dropped here.
 * The declaration may be looser than the tool's schema; toolport still validates every call.
 */
import type { JsonSchema } from '../tools/types.ts';
import { isObject } from '../json.ts';

export type GeminiType = 'STRING' | 'NUMBER' | 'INTEGER' | 'BOOLEAN' | 'ARRAY' | 'OBJECT' | 'NULL';

export interface GeminiSchema {
  type?: GeminiType;
  description?: string;
  title?: string;
  nullable?: boolean;
  enum?: string[];
  format?: string;
  pattern?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  /** int64 fields travel as strings in Gemini's JSON (and in its SDK types). */
  minLength?: string;
  maxLength?: string;
  minItems?: string;
  maxItems?: string;
  minProperties?: string;
  maxProperties?: string;
  properties?: Record<string, GeminiSchema>;
  required?: string[];
  items?: GeminiSchema;
  anyOf?: GeminiSchema[];
}

const TYPES: Record<string, GeminiType> = {
  string: 'STRING',
  number: 'NUMBER',
  integer: 'INTEGER',
  boolean: 'BOOLEAN',
  array: 'ARRAY',
  object: 'OBJECT',
  null: 'NULL',
};
/** Gemini takes only these formats per type. */
const FORMATS: Partial<Record<GeminiType, string[]>> = { STRING: ['enum', 'date-time'], NUMBER: ['float', 'double'], INTEGER: ['int32', 'int64'] };
const COUNTS = ['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'] as const;
const MAX_DEPTH = 32;

function resolveRef(ref: unknown, root: JsonSchema): JsonSchema | null {
  if (typeof ref !== 'string') return null;
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (match === null) return null;
  const defs = root[match[1]!];
  const target = isObject(defs) ? defs[decodeURIComponent(match[2]!)] : undefined;
  return isObject(target) ? target : null;
}

function setType(out: GeminiSchema, type: unknown): void {
  const names = (Array.isArray(type) ? type : [type]).filter((t): t is string => typeof t === 'string' && t in TYPES);
  const nonNull = names.filter((t) => t !== 'null');
  if (names.includes('null') && nonNull.length > 0) out.nullable = true;
  if (nonNull.length === 1) out.type = TYPES[nonNull[0]!]!;
  else if (nonNull.length > 1) out.anyOf = nonNull.map((t) => ({ type: TYPES[t]! }));
  else if (names.length === 1) out.type = 'NULL';
}

function copyConstraints(out: GeminiSchema, schema: JsonSchema): void {
  if (typeof schema.description === 'string') out.description = schema.description;
  if (typeof schema.title === 'string') out.title = schema.title;
  if (schema.nullable === true) out.nullable = true;
  if (typeof schema.pattern === 'string') out.pattern = schema.pattern;
  if ('default' in schema) out.default = schema.default;
  if (typeof schema.minimum === 'number') out.minimum = schema.minimum;
  if (typeof schema.maximum === 'number') out.maximum = schema.maximum;
  for (const key of COUNTS) if (Number.isInteger(schema[key])) out[key] = String(schema[key]);
  if (typeof schema.format === 'string' && out.type !== undefined && FORMATS[out.type]?.includes(schema.format)) out.format = schema.format;
  // Gemini enums are strings only; a string `const` is an enum of one.
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) out.enum = schema.enum as string[];
  else if (typeof schema.const === 'string') out.enum = [schema.const];
}

function convert(schema: unknown, root: JsonSchema, refs: readonly string[]): GeminiSchema {
  if (!isObject(schema) || refs.length > MAX_DEPTH) return {};
  if ('$ref' in schema) {
    const target = resolveRef(schema.$ref, root);
    // A recursive reference cannot be inlined: it becomes an object of any shape.
    if (target === null || refs.includes(schema.$ref as string))
      return { type: 'OBJECT', ...(typeof schema.description === 'string' && { description: schema.description }) };
    const inlined = convert(target, root, [...refs, schema.$ref as string]);
    return typeof schema.description === 'string' ? { ...inlined, description: schema.description } : inlined;
  }
  const out: GeminiSchema = {};
  setType(out, schema.type);
  if (out.type === undefined && typeof schema.const === 'string') out.type = 'STRING';
  copyConstraints(out, schema);
  if (isObject(schema.properties) && Object.keys(schema.properties).length > 0) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([name, sub]) => [name, convert(sub, root, refs)]));
    if (Array.isArray(schema.required)) out.required = schema.required.filter((n): n is string => typeof n === 'string' && n in out.properties!);
  }
  if (isObject(schema.items)) out.items = convert(schema.items, root, refs);
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (branches !== null && out.anyOf === undefined) out.anyOf = branches.map((b) => convert(b, root, refs));
  return out;
}

export function toGeminiSchema(schema: JsonSchema): GeminiSchema {
  return convert(schema, schema, []);
}
