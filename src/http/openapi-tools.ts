/**
 * One OpenAPI operation per tool: `POST /tools/{tool}/invoke`, operationId = the tool's name, its
 * description, its parameters schema as the request body and its result schema as the answer's
 * `value`, so a gateway that imports the document gets one callable tool per operation. The generic
 * `/tools/{name}/invoke` route still serves every tool; the document lists the concrete paths instead.
 */
import type { Caller } from '../callers/keys.ts';
import type { RegisteredTool } from '../tools/registry.ts';

type JsonObject = Record<string, unknown>;

interface Operation extends JsonObject {
  parameters?: Parameter[];
  responses?: Record<string, { content?: Record<string, { schema?: { properties?: JsonObject } }> }>;
}

interface Parameter extends JsonObject {
  in?: string;
  name?: string;
  schema?: JsonObject & { enum?: unknown[] };
}

interface DocumentPath {
  get?: Operation;
  post?: Operation;
}

interface Document extends JsonObject {
  paths?: Record<string, DocumentPath>;
}

const GENERIC_PATH = '/tools/{name}/invoke';
const LIST_PATH = '/tools';

/** A copy: the document is handed to serializers and UIs, the registry's schemas are frozen. */
function copy<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function toolOperation(generic: Operation, tool: RegisteredTool): Operation {
  const responses = copy(generic.responses ?? {});
  const answer = responses['200']?.content?.['application/json']?.schema as (JsonObject & { properties?: JsonObject }) | undefined;
  if (answer?.properties !== undefined && tool.result !== null) {
    // A success's value is typed by the result schema; a failure may carry what the tool reported (a session handle…).
    answer.properties.value = { description: "on success the tool's result (or null); on failure null or what the tool reported" };
    answer.if = { properties: { success: { const: true } }, required: ['success'] };
    answer.then = { properties: { value: { anyOf: [copy(tool.result), { type: 'null' }] } } };
  }
  return {
    operationId: tool.name,
    summary: tool.description,
    description: tool.description,
    tags: ['tools'],
    'x-tool-hash': tool.hash,
    parameters: copy((generic.parameters ?? []).filter((p) => p.in !== 'path')),
    requestBody: { required: true, content: { 'application/json': { schema: copy(tool.parameters) } } },
    responses,
  };
}

const CHOICES = ['auto', 'none', 'required'];

/** GET /tools with `tool_choice` enumerating the choices and these tools' names. */
function withToolChoices(item: DocumentPath, names: readonly string[]): DocumentPath {
  const list = item.get;
  if (list === undefined) return item;
  const parameters = (list.parameters ?? []).map((p) => (p.name === 'tool_choice' ? { ...p, schema: { ...p.schema, enum: [...CHOICES, ...names] } } : p));
  return { ...item, get: { ...list, parameters } };
}

/** Replaces the generic per-name path with one concrete path per tool (transformObject of @fastify/swagger). */
export function withToolOperations<D extends object>(document: D, tools: readonly RegisteredTool[]): D {
  const given = (document as Document).paths;
  const generic = given?.[GENERIC_PATH]?.post;
  if (given === undefined || generic === undefined) return document;
  const paths: NonNullable<Document['paths']> = {};
  for (const [path, item] of Object.entries(given)) {
    if (path === LIST_PATH)
      paths[path] = withToolChoices(
        item,
        tools.map((t) => t.name),
      );
    else if (path !== GENERIC_PATH) paths[path] = item;
    else for (const tool of tools) paths[`/tools/${tool.name}/invoke`] = { post: toolOperation(generic, tool) };
  }
  return { ...document, paths };
}

/** The document as one caller may see it: the per-tool operations of its tools only (none without a key). */
export function forCaller<D extends object>(document: D, caller: Caller | null): D {
  const given = (document as Document).paths ?? {};
  const paths: NonNullable<Document['paths']> = {};
  for (const [path, item] of Object.entries(given)) {
    const tool = item.post?.['x-tool-hash'] === undefined ? null : String(item.post.operationId);
    if (path === LIST_PATH) paths[path] = choicesFor(item, caller);
    else if (tool === null || (caller !== null && caller.allows(tool))) paths[path] = item;
  }
  return { ...document, paths };
}

/** GET /tools's `tool_choice` enum with only the tools this caller may call. */
function choicesFor(item: DocumentPath, caller: Caller | null): DocumentPath {
  const list = item.get;
  if (list === undefined) return item;
  const allowed = (value: unknown) => CHOICES.includes(String(value)) || (caller !== null && caller.allows(String(value)));
  const parameters = (list.parameters ?? []).map((p) =>
    p.name === 'tool_choice' && p.schema?.enum ? { ...p, schema: { ...p.schema, enum: p.schema.enum.filter(allowed) } } : p,
  );
  return { ...item, get: { ...list, parameters } };
}
