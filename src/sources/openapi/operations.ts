/**
 * The operations of a dereferenced OpenAPI 3.0/3.1 document, each described as a tool: a
 * `parameters` schema made of its path, query and header parameters (by their own names) and its
 * JSON request body (as `body`), a `result` from its 2xx JSON answer, and what the request needs.
 */
import type { JsonSchema } from '../../tools/types.ts';
import { followRefs, refResolver, toJsonSchema, type RefResolver } from './schema.ts';

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface OperationParameter {
  /** The name the upstream knows. */
  name: string;
  in: 'path' | 'query' | 'header';
  /** The argument's name in the tool's schema (the name, unless two locations share it). */
  property: string;
  /** Query only: repeat the key per array item (form, explode) or join items with commas. */
  explode: boolean;
  deepObject: boolean;
}

export interface Operation {
  /** operationId, or made from the method and path: the name matched by include globs and `tools:`. */
  upstreamName: string;
  method: string;
  /** The path template as the document writes it, e.g. `/pet/{petId}`. */
  path: string;
  description: string;
  parameters: JsonSchema;
  result: JsonSchema | undefined;
  inputs: OperationParameter[];
  /** The argument that holds the JSON request body, or null when the operation takes none. */
  bodyProperty: string | null;
  /** Why the operation cannot be called with JSON (a required body of another media type), or null. */
  unsupported: string | null;
  /** The operation's tags and summary: words a search for it may use. */
  tags: string[];
  summary: string;
}

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Headers OpenAPI itself says to ignore when declared as parameters. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
const MAX_DESCRIPTION = 200;

export function descriptionOf(...candidates: unknown[]): string {
  const text = candidates.find((c): c is string => typeof c === 'string' && c.trim() !== '')!.trim().replace(/\s+/g, ' ');
  return text.length > MAX_DESCRIPTION ? `${text.slice(0, MAX_DESCRIPTION - 1)}…` : text;
}

function jsonMedia(content: unknown, refs?: RefResolver): Node | undefined {
  if (!isNode(content)) return undefined;
  const type = Object.keys(content).find((t) => /^application\/(.+\+)?json\b/i.test(t)) ?? (content['*/*'] ? '*/*' : undefined);
  const media = type === undefined ? undefined : followRefs(content[type], refs);
  return isNode(media) ? media : undefined;
}

/** The schema with a description added (a copy: converted schemas are shared). */
function described(schema: JsonSchema, description: unknown): JsonSchema {
  if (typeof description !== 'string' || description.trim() === '' || schema.description !== undefined) return schema;
  return { ...schema, description: description.trim() };
}

/** The schema of the first 2xx answer with a JSON body. */
function resultSchema(responses: unknown, refs: RefResolver | undefined): JsonSchema | undefined {
  if (!isNode(responses)) return undefined;
  const codes = Object.keys(responses).filter((c) => /^2(\d\d|XX)$/i.test(c)).sort();
  for (const code of codes) {
    const response = followRefs(responses[code], refs);
    const media = jsonMedia(isNode(response) ? response.content : undefined, refs);
    if (media !== undefined && media.schema !== undefined) return toJsonSchema(media.schema, 0, refs);
  }
  return undefined;
}

/** Path-level parameters, overridden by the operation's own of the same name and location. */
function declaredParameters(pathItem: Node, operation: Node, refs: RefResolver | undefined): Node[] {
  const byKey = new Map<string, Node>();
  for (const list of [pathItem.parameters, operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const declared of list) {
      const p = followRefs(declared, refs);
      if (isNode(p) && typeof p.name === 'string') byKey.set(`${String(p.in)}:${p.name}`, p);
    }
  }
  return [...byKey.values()];
}

function nameFromRoute(method: string, path: string): string {
  const words = path.replace(/[{}]/g, '').split('/').filter((w) => w !== '');
  return [method, ...words].join('_');
}

function describeOperation(method: string, path: string, pathItem: Node, operation: Node, refs: RefResolver | undefined): Operation {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const inputs: OperationParameter[] = [];
  for (const p of declaredParameters(pathItem, operation, refs)) {
    const where = p.in;
    if (where !== 'path' && where !== 'query' && where !== 'header') continue; // cookies are not sent
    const name = p.name as string;
    if (where === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
    const property = properties[name] === undefined ? name : `${where}_${name}`;
    properties[property] = described(toJsonSchema(p.schema ?? jsonMedia(p.content, refs)?.schema, 0, refs), p.description);
    if (p.required === true || where === 'path') required.push(property);
    inputs.push({ name, in: where, property, explode: p.explode !== false, deepObject: p.style === 'deepObject' });
  }
  let bodyProperty: string | null = null;
  let unsupported: string | null = null;
  const requestBody = followRefs(operation.requestBody, refs);
  if (isNode(requestBody)) {
    const media = jsonMedia(requestBody.content, refs);
    if (media !== undefined) {
      bodyProperty = properties.body === undefined ? 'body' : 'request_body';
      properties[bodyProperty] = described(toJsonSchema(media.schema, 0, refs), requestBody.description);
      if (requestBody.required === true) required.push(bodyProperty);
    } else if (requestBody.required === true) {
      unsupported = `its request body is ${Object.keys(isNode(requestBody.content) ? requestBody.content : {}).join(' or ') || 'of no media type'}, not JSON`;
    }
  }
  const upstreamName = typeof operation.operationId === 'string' && operation.operationId !== '' ? operation.operationId : nameFromRoute(method, path);
  return {
    upstreamName,
    method: method.toUpperCase(),
    path,
    description: descriptionOf(operation.description, operation.summary, pathItem.description, pathItem.summary, `${method.toUpperCase()} ${path}`),
    parameters: { type: 'object', properties, ...(required.length > 0 && { required }) },
    result: resultSchema(operation.responses, refs),
    tags: Array.isArray(operation.tags) ? operation.tags.filter((t): t is string => typeof t === 'string') : [],
    summary: typeof operation.summary === 'string' ? operation.summary : '',
    inputs,
    bodyProperty,
    unsupported,
  };
}

/** Every operation of the document, in the document's order; local `$ref`s are followed where met. */
export function operationsOf(document: Node): Operation[] {
  const refs = refResolver(document);
  const operations: Operation[] = [];
  const paths = isNode(document.paths) ? document.paths : {};
  for (const [path, declared] of Object.entries(paths)) {
    const pathItem = followRefs(declared, refs);
    if (!isNode(pathItem)) continue;
    for (const method of HTTP_METHODS) {
      const operation = pathItem[method];
      if (isNode(operation)) operations.push(describeOperation(method, path, pathItem, operation, refs));
    }
  }
  return operations;
}
