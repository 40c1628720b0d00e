/**
 * OpenAPI schemas → JSON Schema 2020-12: 3.0's `nullable` becomes a `null` type, boolean
 * `exclusiveMinimum/Maximum` become numbers, and what is not a validation keyword (`example`,
 * `xml`, `discriminator`, `x-*`, formats AJV does not know…) is left out. Local `$ref`s are
 * followed through the document's own resolver (each target converted once and shared); a `$ref`
 * back into a schema being converted (a recursive schema: expanding it would never end) accepts
 * any value.
 */
type Schema = Record<string, unknown>;

/** Follows a document's local `$ref`s (`#/components/...`); answers undefined for others. */
export interface RefResolver {
  target(ref: string): unknown;
  /** Converted targets, by ref: a schema used by many operations is converted once. */
  readonly converted: Map<string, Schema>;
  /** The refs being converted now (a ref met again inside its own conversion is recursive). */
  readonly active: Set<string>;
}

export function refResolver(document: Record<string, unknown>): RefResolver {
  return {
    converted: new Map(),
    active: new Set(),
    target(ref) {
      if (!ref.startsWith('#/')) return undefined;
      let node: unknown = document;
      for (const raw of ref.slice(2).split('/')) {
        const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
        if (typeof node !== 'object' || node === null || !Object.hasOwn(node, key)) return undefined;
        node = (node as Record<string, unknown>)[key];
      }
      return node;
    },
  };
}

/** A `$ref` chain of non-schema objects (parameters, request bodies, responses) followed to its end. */
export function followRefs(node: unknown, refs: RefResolver | undefined): unknown {
  for (let hops = 0; hops < 16 && isSchema(node) && typeof node.$ref === 'string' && refs !== undefined; hops++) {
    const target = refs.target(node.$ref);
    if (target === undefined) return node;
    node = target;
  }
  return node;
}

function recursive(ref: string): Schema {
  return { description: `(recursive: ${ref.split('/').pop()})` };
}

function convertRef(ref: string, depth: number, refs: RefResolver | undefined): Schema {
  if (refs === undefined || refs.active.has(ref)) return recursive(ref);
  const known = refs.converted.get(ref);
  if (known !== undefined) return known;
  const target = refs.target(ref);
  if (target === undefined) return recursive(ref);
  refs.active.add(ref);
  try {
    const converted = toJsonSchema(target, depth + 1, refs);
    refs.converted.set(ref, converted);
    return converted;
  } finally {
    refs.active.delete(ref);
  }
}

/** The keywords kept; everything else is documentation for humans or generators. */
const KEYWORDS = new Set([
  'type', 'enum', 'const', 'format', 'title', 'description', 'default', 'deprecated', 'readOnly', 'writeOnly',
  'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'maxLength', 'minLength', 'pattern',
  'items', 'prefixItems', 'maxItems', 'minItems', 'uniqueItems', 'contains', 'minContains', 'maxContains',
  'properties', 'patternProperties', 'additionalProperties', 'required', 'maxProperties', 'minProperties', 'propertyNames',
  'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', 'dependentRequired', 'dependentSchemas', 'examples',
]);
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames']);
const SUBSCHEMA_LISTS = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const SUBSCHEMA_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** The formats of ajv-formats (what the tool AJV validates); others would not compile in strict mode. */
const FORMATS = new Set([
  'date', 'time', 'date-time', 'iso-time', 'iso-date-time', 'duration', 'uri', 'uri-reference', 'uri-template', 'url',
  'email', 'hostname', 'ipv4', 'ipv6', 'regex', 'uuid', 'json-pointer', 'json-pointer-uri-fragment', 'relative-json-pointer',
  'byte', 'int32', 'int64', 'float', 'double', 'password', 'binary',
]);
const MAX_DEPTH = 48;

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The converted schema. Converted `$ref` targets are shared between the schemas that use them:
 * copy before changing one.
 */
export function toJsonSchema(schema: unknown, depth = 0, refs?: RefResolver): Schema {
  if (schema === true || schema === undefined) return {};
  if (schema === false) return { not: {} };
  if (!isSchema(schema) || depth > MAX_DEPTH) return {};
  if (typeof schema.$ref === 'string') return convertRef(schema.$ref, depth, refs);
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!KEYWORDS.has(key)) continue;
    if (SUBSCHEMA.has(key)) out[key] = isSchema(value) || typeof value === 'boolean' ? toJsonSchema(value, depth + 1, refs) : value;
    else if (SUBSCHEMA_LISTS.has(key) && Array.isArray(value)) out[key] = value.map((v) => toJsonSchema(v, depth + 1, refs));
    else if (SUBSCHEMA_MAPS.has(key) && isSchema(value)) {
      out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, toJsonSchema(v, depth + 1, refs)]));
    } else out[key] = value;
  }
  if (typeof out.format === 'string' && !FORMATS.has(out.format)) delete out.format;
  // OpenAPI 3.0 (draft 4 style): exclusiveMinimum: true qualifies minimum.
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof out[flag] === 'boolean') {
      if (out[flag] === true && typeof out[bound] === 'number') {
        out[flag] = out[bound];
        delete out[bound];
      } else delete out[flag];
    }
  }
  if (Array.isArray(out.required) && out.required.length === 0) delete out.required;
  if (out.type === undefined) inferType(out);
  if (schema.nullable === true) return nullable(out);
  return out;
}

/** The strict AJV wants a `type` beside type-specific keywords; OpenAPI documents often leave it implied. */
const KEYWORDS_OF_TYPE: [string, string[]][] = [
  ['object', ['properties', 'patternProperties', 'additionalProperties', 'required', 'maxProperties', 'minProperties', 'propertyNames', 'dependentRequired', 'dependentSchemas']],
  ['array', ['items', 'prefixItems', 'maxItems', 'minItems', 'uniqueItems', 'contains', 'minContains', 'maxContains']],
  ['string', ['pattern', 'maxLength', 'minLength']],
  ['number', ['multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum']],
];

function inferType(schema: Schema): void {
  const implied = KEYWORDS_OF_TYPE.filter(([, keys]) => keys.some((k) => k in schema)).map(([type]) => type);
  if (implied.length === 1) schema.type = implied[0];
  else if (implied.length > 1) schema.type = implied;
}

function nullable(schema: Schema): Schema {
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'], ...(Array.isArray(schema.enum) && { enum: [...schema.enum, null] }) };
  if (Array.isArray(schema.type)) return schema.type.includes('null') ? schema : { ...schema, type: [...schema.type, 'null'] };
  return { anyOf: [schema, { type: 'null' }] };
}
