/**
 * Resources, resource templates and prompts as a plugin defines them (docs/plugins.md). Part of the
 * package's public surface, so it loads nothing of the service: src/tools/entry-of.ts checks a
 * definition and turns it into a catalog entry (src/tools/entries.ts).
 */
import { isObject } from '../json.ts';
import type { EntryContext, PromptArgument, PromptResult, ResourceContents } from './entries.ts';

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
