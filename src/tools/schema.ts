/**
 * Tool schemas: one strict AJV instance of our own (Fastify's route AJV coerces and strips, which
 * must never happen to tool arguments), the "undeclared properties are refused" default, and
 * violations rendered as `path: problem` lines a model can act on.
 */
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { isObject } from '../json.ts';
import type { JsonSchema } from './types.ts';

const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

export type Validator = ValidateFunction;

export function createToolAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    // `anyOf: [{required: ['a']}, {required: ['b']}]` is a common "one of these" idiom.
    strictRequired: false,
    allowUnionTypes: true,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: false,
    validateFormats: true,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * Schemas from upstreams (OpenAPI documents, MCP servers) as they are published: strict mode off
 * (implied types, unknown keywords and formats tolerated; unknown formats accept any string) and
 * patterns as plain regular expressions. Still validates what the schema says.
 */
export function createUpstreamAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    allowUnionTypes: true,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: false,
    validateFormats: true,
    unicodeRegExp: false,
    logger: false,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * The copy of an upstream schema that the lenient AJV compiles: the few things it would still
 * throw on are dropped — `nullable` without a `type` (it constrains nothing there) and a
 * `$schema` naming another draft.
 */
export function upstreamCopy(schema: unknown, root = true): unknown {
  if (typeof schema !== 'object' || schema === null) return schema;
  if (Array.isArray(schema)) return schema.map((item) => upstreamCopy(item, false));
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' && !('type' in schema)) continue;
    if (key === '$schema' && root) continue;
    copy[key] = key === 'enum' || key === 'const' || key === 'default' || key === 'examples' ? value : upstreamCopy(value, false);
  }
  return copy;
}

/** Every `pattern` in the schema that is not a regular expression, for the check before a lazy compile. */
export function badPatterns(schema: unknown, found: string[] = [], seen = new Set<object>()): string[] {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return found;
  seen.add(schema);
  if (Array.isArray(schema)) {
    for (const item of schema) badPatterns(item, found, seen);
    return found;
  }
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'pattern' && typeof value === 'string') {
      try {
        new RegExp(value);
      } catch {
        found.push(value);
      }
    } else if (key !== 'enum' && key !== 'const' && key !== 'default' && key !== 'examples') badPatterns(value, found, seen);
  }
  return found;
}

/**
 * A validator compiled on its first use. Calls see the same `errors` as the compiled one. A
 * schema that fails to compile then refuses every value with one error naming the problem, or,
 * with `acceptWhenBroken` (an upstream's result schema: the upstream's answer is what it is),
 * accepts every value.
 */
export function lazyValidator(compile: () => Validator, acceptWhenBroken = false): Validator {
  let compiled: Validator | null = null;
  let problem: string | null = null;
  const validate = ((data: unknown) => {
    if (compiled === null && problem === null) {
      try {
        compiled = compile();
      } catch (err) {
        problem = err instanceof Error ? err.message : String(err);
      }
    }
    if (compiled === null) {
      if (acceptWhenBroken) return true;
      validate.errors = [
        { instancePath: '', schemaPath: '#', keyword: 'schema', params: {}, message: `cannot be checked: the schema does not compile (${problem})` },
      ];
      return false;
    }
    const valid = compiled(data) as boolean;
    validate.errors = compiled.errors;
    return valid;
  }) as Validator;
  validate.errors = null;
  return validate;
}

const COMPOSED = ['allOf', 'anyOf', 'oneOf', 'if', '$ref', 'additionalProperties', 'patternProperties', 'unevaluatedProperties'];
// Only subschemas that describe a whole value are closed. Branches that see part of an object
// (allOf, anyOf, oneOf, not, if/then/else) stay open: closing them changes what the schema means.
const SUBSCHEMA_MAPS = ['properties', '$defs', 'definitions', 'patternProperties'];
const SUBSCHEMA_LISTS = ['prefixItems'];
const SUBSCHEMAS = ['items', 'additionalProperties', 'contains'];

/**
 * A copy of the schema where every object schema that declares `properties` and says nothing
 * about extra properties gets `additionalProperties: false`.
 */
export function closeObjects(schema: JsonSchema): JsonSchema {
  const copy: JsonSchema = { ...schema };
  if (isObject(copy.properties) && !COMPOSED.some((k) => k in copy)) copy.additionalProperties = false;
  for (const key of SUBSCHEMA_MAPS) {
    const map = copy[key];
    if (isObject(map)) {
      copy[key] = Object.fromEntries(Object.entries(map).map(([name, sub]) => [name, isObject(sub) ? closeObjects(sub) : sub]));
    }
  }
  for (const key of SUBSCHEMA_LISTS) {
    const list = copy[key];
    if (Array.isArray(list)) copy[key] = list.map((sub) => (isObject(sub) ? closeObjects(sub) : sub));
  }
  for (const key of SUBSCHEMAS) {
    const sub = copy[key];
    if (isObject(sub)) copy[key] = closeObjects(sub);
  }
  return copy;
}

const MAX_VIOLATIONS = 20;

function describe(error: ErrorObject): string {
  const path = error.instancePath;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${path}/${String(params.missingProperty)}: is required`;
    case 'additionalProperties':
      return `${path}/${String(params.additionalProperty)}: is not an allowed property`;
    case 'enum':
      return `${path || '/'}: must be one of ${JSON.stringify(params.allowedValues)}`;
    default:
      return `${path || '/'}: ${error.message ?? 'is invalid'}`;
  }
}

/** Every violation as `path: problem` (JSON Pointer paths, `/` for the whole object). */
export function violations(errors: readonly ErrorObject[] | null | undefined): string[] {
  const lines = [...new Set((errors ?? []).map(describe))];
  if (lines.length > MAX_VIOLATIONS) {
    return [...lines.slice(0, MAX_VIOLATIONS), `… and ${lines.length - MAX_VIOLATIONS} more`];
  }
  return lines;
}
