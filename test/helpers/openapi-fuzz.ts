/**
 * A property-based API fuzzer over an OpenAPI 3.1 document (what Schemathesis does, in fast-check):
 * requests are generated from each operation's parameters and body schema — valid values mostly,
 * arbitrary ones sometimes — and every answer is checked against the operation's documented
 * responses: a documented status, a documented content type, a body valid for the documented schema.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';

type Json = Record<string, any>;

export interface Operation {
  method: string;
  path: string;
  id: string;
  parameters: Json[];
  body: Json | null;
  responses: Record<string, Json>;
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Whether every parameter is present when required and valid for its schema (the body aside). */
  parametersValid: boolean;
}

export interface Answer {
  status: number;
  headers: Record<string, unknown>;
  body: string;
}

/** Every local `$ref` replaced by what it points at (the document has no recursive ones). */
export function dereference(document: Json): Json {
  const resolve = (node: any, seen: string[]): any => {
    if (Array.isArray(node)) return node.map((item) => resolve(item, seen));
    if (node === null || typeof node !== 'object') return node;
    if (typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
      if (seen.includes(node.$ref)) return {};
      const target = node.$ref
        .slice(2)
        .split('/')
        .reduce((at: any, key: string) => at?.[key], document);
      return resolve(target, [...seen, node.$ref]);
    }
    return Object.fromEntries(Object.entries(node).map(([key, value]) => [key, resolve(value, seen)]));
  };
  return resolve(document, []);
}

export function operationsOf(document: Json): Operation[] {
  const operations: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(document.paths)) {
    for (const [method, operation] of Object.entries<Json>(item)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        id: operation.operationId ?? `${method} ${path}`,
        parameters: operation.parameters ?? [],
        body: operation.requestBody?.content?.['application/json']?.schema ?? null,
        responses: operation.responses ?? {},
      });
    }
  }
  return operations;
}

/** Printable ASCII: what an HTTP header value may carry. */
const headerText = fc.string({
  unit: fc.constantFrom(...' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~'),
  maxLength: 40,
});

/** Values valid for a JSON Schema, as far as this small generator knows the keywords. */
export function fromSchema(schema: Json | undefined, depth = 0): fc.Arbitrary<unknown> {
  if (schema === undefined || depth > 4) return fc.jsonValue({ maxDepth: 2 });
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum);
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches) && branches.length > 0)
    return fc.oneof(...branches.map((branch: Json) => fromSchema({ ...schema, anyOf: undefined, oneOf: undefined, ...branch }, depth + 1)));
  const type = Array.isArray(schema.type) ? schema.type : schema.type === undefined ? null : [schema.type];
  if (type === null) return schema.properties ? fromSchema({ ...schema, type: 'object' }, depth) : fc.jsonValue({ maxDepth: 2 });
  return fc.oneof(
    ...type.map((kind: string): fc.Arbitrary<unknown> => {
      switch (kind) {
        case 'string':
          if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 2048));
          return fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(schema.maxLength ?? 30, 60) });
        case 'integer':
          return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
        case 'number':
          return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true, noDefaultInfinity: true });
        case 'boolean':
          return fc.boolean();
        case 'null':
          return fc.constant(null);
        case 'array':
          return fc.array(fromSchema(schema.items, depth + 1), { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 3, 3) });
        case 'object': {
          const properties: Json = schema.properties ?? {};
          const required: string[] = schema.required ?? [];
          const record = fc.record(Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, fromSchema(value as Json, depth + 1)])), {
            requiredKeys: required.filter((key) => key in properties),
          });
          return record;
        }
        default:
          return fc.jsonValue({ maxDepth: 2 });
      }
    }),
  );
}

/** A parameter's value as text: mostly valid for its schema, sometimes anything. */
function parameterValue(parameter: Json, pathValues: readonly string[]): fc.Arbitrary<string> {
  // The generator knows most keywords, not all (`not`, lookaheads): what it makes is kept only when the schema accepts it.
  const valid = fromSchema(parameter.schema)
    .map((value) => (typeof value === 'string' ? value : JSON.stringify(value)))
    .filter((value) => parameterAccepts(parameter, value));
  const known = pathValues.length > 0 && parameter.in === 'path' ? [fc.constantFrom(...pathValues)] : [];
  // A wild path segment is still a segment: not empty, not "." or ".." (clients resolve those away).
  const wild =
    parameter.in === 'header'
      ? headerText
      : parameter.in === 'path'
        ? fc.string({ minLength: 1, maxLength: 40 }).filter((v) => v !== '.' && v !== '..')
        : fc.string({ maxLength: 40 });
  return fc.oneof({ arbitrary: valid, weight: 5 }, ...known.map((arbitrary) => ({ arbitrary, weight: 3 })), { arbitrary: wild, weight: 1 });
}

const ascii = /^[\x20-\x7e]*$/;

/** Requests for one operation; `pathValues` are real values worth trying in path parameters (tool names…). */
export function requestsFor(operation: Operation, pathValues: readonly string[] = []): fc.Arbitrary<FuzzRequest> {
  const byIn = (where: string) => operation.parameters.filter((p) => p.in === where);
  const optional = (parameter: Json) => parameterValue(parameter, pathValues).map((value) => [parameter.name as string, value] as const);
  const present = (parameter: Json) =>
    parameter.required ? optional(parameter).map((entry) => entry as readonly [string, string] | null) : fc.option(optional(parameter), { freq: 2, nil: null });
  const body =
    operation.body === null
      ? fc.constant(undefined)
      : fc.oneof({ arbitrary: fromSchema(operation.body), weight: 4 }, { arbitrary: fc.jsonValue({ maxDepth: 3 }), weight: 1 });
  return fc
    .record({
      path: fc.tuple(...byIn('path').map((p) => parameterValue(p, pathValues))),
      query: fc.tuple(...byIn('query').map(present)),
      headers: fc.tuple(...byIn('header').map(present)),
      body,
    })
    .map(({ path, query, headers, body: payload }) => {
      const given = [
        ...byIn('path').map((p, i) => [p, path[i]] as const),
        ...byIn('query').map((p, i) => [p, query[i]?.[1]] as const),
        ...byIn('header').map((p, i) => [p, headers[i] !== null && ascii.test(headers[i]![1]) ? headers[i]![1] : undefined] as const),
      ];
      const parametersValid = given.every(([parameter, value]) => (value === undefined ? !parameter.required : parameterAccepts(parameter, value)));
      const names = byIn('path').map((p) => p.name as string);
      const url = names.reduce((at, name, i) => at.replace(`{${name}}`, encodeURIComponent(path[i]!)), operation.path);
      const search = new URLSearchParams(query.filter((entry): entry is readonly [string, string] => entry !== null).map(([k, v]): [string, string] => [k, v]));
      const sent: Record<string, string> = Object.fromEntries(
        headers.filter((entry): entry is readonly [string, string] => entry !== null && ascii.test(entry[1])),
      );
      if (payload !== undefined) sent['content-type'] = 'application/json';
      return {
        method: operation.method,
        url: `${url}${search.size > 0 ? `?${search}` : ''}`,
        headers: sent,
        ...(payload !== undefined && { payload: JSON.stringify(payload) }),
        parametersValid,
      };
    });
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
/** Parameters travel as text: "5" is a valid integer parameter. */
const parameterAjv = new Ajv2020({ strict: false, coerceTypes: true, validateFormats: false });
const parameterValidators = new WeakMap<object, ReturnType<typeof ajv.compile>>();

function parameterAccepts(parameter: Json, value: string): boolean {
  const schema: Json = parameter.schema ?? {};
  let validate = parameterValidators.get(schema);
  if (validate === undefined) {
    validate = parameterAjv.compile({ type: 'object', properties: { value: schema } });
    parameterValidators.set(schema, validate);
  }
  return validate({ value }) === true;
}

/**
 * The document and the server must agree on parameters (Schemathesis' positive and negative data
 * checks): a parameter the document accepts is not refused as a bad parameter, and one it refuses
 * is not accepted.
 */
export function disagreement(request: FuzzRequest, answer: Answer): string | null {
  if (!request.parametersValid) return answer.status >= 400 && answer.status < 500 ? null : `parameters the document refuses were answered ${answer.status}`;
  if (answer.status !== 400) return null;
  let problem: { type?: string; detail?: string };
  try {
    problem = JSON.parse(answer.body);
  } catch {
    return null;
  }
  const slug = String(problem.type ?? '').replace('urn:toolport:problem:', '');
  const aboutParameters = slug === 'invalid-query' || slug === 'invalid-header' || (slug === 'invalid-request' && !String(problem.detail).startsWith('body'));
  return aboutParameters ? `parameters the document accepts were refused: ${problem.detail}` : null;
}
const validators = new WeakMap<object, ReturnType<typeof ajv.compile>>();

/** What is wrong with an answer for the document, or null when it is as documented. */
export function undocumented(operation: Operation, answer: Answer): string | null {
  const documented = operation.responses[String(answer.status)] ?? operation.responses.default;
  if (documented === undefined) return `status ${answer.status} is not documented (documented: ${Object.keys(operation.responses).join(', ')})`;
  const contentType = String(answer.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  const content: Json | undefined = documented.content;
  if (content === undefined || Object.keys(content).length === 0) {
    return answer.body === '' ? null : `status ${answer.status} is documented without a body, but one came (${contentType})`;
  }
  const media = content[contentType];
  if (media === undefined) return `status ${answer.status} answered ${contentType || 'no content type'}; documented: ${Object.keys(content).join(', ')}`;
  if (!/json/.test(contentType) || media.schema === undefined) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    return `status ${answer.status} answered ${contentType} that is not JSON`;
  }
  let validate = validators.get(media.schema);
  if (validate === undefined) {
    validate = ajv.compile(media.schema);
    validators.set(media.schema, validate);
  }
  return validate(parsed) ? null : `status ${answer.status} body breaks its schema: ${ajv.errorsText(validate.errors)}`;
}
