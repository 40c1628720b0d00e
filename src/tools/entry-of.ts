/** A plugin's resource, template or prompt checked and turned into a catalog entry (src/tools/entries.ts). */
import { isObject } from '../json.ts';
import { ToolDefinitionError } from '../errors.ts';
import { entryHash, type CatalogEntry, type Complete, type EntryMetadata, type ResourceContents } from './entries.ts';
import type { Completions, PromptDefinition, ReadReturn, ResourceDefinition, ResourceTemplateDefinition } from './entry-definitions.ts';
import type { ToolSource } from './source.ts';

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
export function entryOf(definition: unknown, source: ToolSource): CatalogEntry {
  const fail = (problem: string): never => {
    throw new ToolDefinitionError(`${source.label}: ${problem}`);
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
