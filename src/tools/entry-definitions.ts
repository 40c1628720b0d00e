/**
 * Resources, resource templates and prompts as a plugin defines them (docs/plugins.md), checked
 * once and turned into catalog entries (src/tools/entries.ts).
 */
import { isObject } from '../json.ts';
import { ToolDefinitionError } from '../errors.ts';
import {
  entryHash,
  type CatalogEntry,
  type Complete,
  type EntryContext,
  type EntryMetadata,
  type PromptArgument,
  type PromptResult,
  type ResourceContents,
} from './entries.ts';

export type { EntryContext, PromptArgument, PromptResult, ResourceContents };

/** What `read` may return: text, one item, or several (each `uri` defaults to the one read). */
export type ReadReturn = string | Partial<ResourceContents> | Partial<ResourceContents>[];

/** Per argument: the values it may take, given the text typed so far. */
export type Completions = Record<string, (value: string, context: EntryContext, others: Readonly<Record<string, string>>) => string[] | Promise<string[]>>;

interface DefinitionMetadata {
  name: string;
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
}

export interface ResourceDefinition extends DefinitionMetadata {
  uri: string;
  read(context: EntryContext): ReadReturn | Promise<ReadReturn>;
  /** Calls `changed` whenever the resource changes (subscribers get `notifications/resources/updated`); answers a function that stops it. */
  watch?(changed: () => void): () => void;
}

export interface ResourceTemplateDefinition extends DefinitionMetadata {
  /** `{var}` matches one path segment; `{+var}` anything. */
  uriTemplate: string;
  read(uri: string, variables: Record<string, string>, context: EntryContext): ReadReturn | Promise<ReadReturn>;
  complete?: Completions;
}

export interface PromptDefinition {
  name: string;
  title?: string;
  description?: string;
  arguments?: PromptArgument[];
  _meta?: Record<string, unknown>;
  get(args: Record<string, string>, context: EntryContext): PromptResult | Promise<PromptResult>;
  complete?: Completions;
}

export type EntryDefinition = ResourceDefinition | ResourceTemplateDefinition | PromptDefinition;

/** Identity at run time; gives TypeScript plugins a checked resource. */
export function defineResource(definition: ResourceDefinition): ResourceDefinition {
  return definition;
}

export function defineResourceTemplate(definition: ResourceTemplateDefinition): ResourceTemplateDefinition {
  return definition;
}

export function definePrompt(definition: PromptDefinition): PromptDefinition {
  return definition;
}

/** Whether a plugin's exported object is a resource, template or prompt rather than a tool. */
export function isEntryDefinition(value: unknown): value is EntryDefinition {
  return isObject(value) && typeof value.handler !== 'function' && (typeof value.read === 'function' || typeof value.get === 'function');
}

function contentsOf(uri: string, mimeType: string | undefined, returned: ReadReturn): ResourceContents[] {
  const items = typeof returned === 'string' ? [{ text: returned }] : Array.isArray(returned) ? returned : [returned];
  return items.map((item) => {
    const contents: ResourceContents = { uri: item.uri ?? uri, ...item };
    if (contents.mimeType === undefined && mimeType !== undefined) contents.mimeType = mimeType;
    return contents;
  });
}

function completeOf(completions: Completions | undefined): Complete | undefined {
  if (completions === undefined) return undefined;
  return async (argument, value, context, others) => {
    const values = (await completions[argument]?.(value, context, others)) ?? [];
    // MCP caps a completion at 100 values.
    return { values: values.slice(0, 100), total: values.length, hasMore: values.length > 100 };
  };
}

function metadataOf(definition: Record<string, unknown>): EntryMetadata {
  const metadata: EntryMetadata = {};
  for (const key of ['title', 'description', 'mimeType', 'annotations', '_meta'] as const)
    if (definition[key] !== undefined) metadata[key] = definition[key] as never;
  return metadata;
}

/** The catalog entry of a plugin's definition; throws ToolDefinitionError naming what is wrong. */
export function entryOf(definition: unknown, source: string): CatalogEntry {
  const fail = (problem: string): never => {
    throw new ToolDefinitionError(`${source}: ${problem}`);
  };
  if (!isObject(definition)) return fail('a definition must be an object');
  const { name } = definition;
  if (typeof name !== 'string' || name.length < 1 || name.length > 128) return fail('a resource or prompt needs a name of 1–128 characters');
  const metadata = metadataOf(definition);
  if (typeof definition.uriTemplate === 'string') {
    const template = definition as unknown as ResourceTemplateDefinition;
    const complete = completeOf(template.complete);
    return {
      kind: 'template',
      source,
      name,
      metadata,
      hash: entryHash('template', template.uriTemplate, metadata),
      uriTemplate: template.uriTemplate,
      read: async (uri, variables, context) => contentsOf(uri, template.mimeType, await template.read(uri, { ...variables }, context)),
      ...(complete !== undefined && { complete }),
    };
  }
  if (typeof definition.uri === 'string') {
    const resource = definition as unknown as ResourceDefinition;
    if (typeof resource.read !== 'function') return fail(`resource "${name}" needs a read function`);
    return {
      kind: 'resource',
      source,
      name,
      metadata,
      hash: entryHash('resource', resource.uri, metadata),
      uri: resource.uri,
      read: async (context) => contentsOf(resource.uri, resource.mimeType, await resource.read(context)),
      ...(typeof resource.watch === 'function' && { watch: (changed: () => void) => resource.watch!(changed) }),
    };
  }
  const prompt = definition as unknown as PromptDefinition;
  if (typeof prompt.get !== 'function') return fail(`"${name}" is neither a tool (handler), a resource (uri, read) nor a prompt (get)`);
  const args = prompt.arguments ?? [];
  if (!Array.isArray(args) || !args.every((a) => isObject(a) && typeof a.name === 'string'))
    return fail(`prompt "${name}": arguments must be a list of {name}`);
  const complete = completeOf(prompt.complete);
  return {
    kind: 'prompt',
    source,
    name,
    metadata,
    hash: entryHash('prompt', name, metadata, args),
    arguments: Object.freeze(args.map((a) => ({ ...a }))),
    get: async (given, context) => prompt.get({ ...given }, context),
    ...(complete !== undefined && { complete }),
  };
}
