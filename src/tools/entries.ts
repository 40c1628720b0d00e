/**
 * The catalog's kinds besides tools: resources, resource templates and prompts. Each entry comes
 * from a source (a plugin module, an upstream MCP server), has a name (what access rules and
 * toolsets match, as a tool's name), a hash that pins its definition, the metadata MCP lists, and
 * async functions that read, get or complete it for one request. A source adds a new kind by
 * adding entries here, not a registry of its own.
 */
import type { Logger } from 'pino';
import { hashJson } from './hash.ts';
import type { UserIdentity } from '../callers/keys.ts';
import { sameSource, type ToolSource } from './source.ts';

/** What an entry's functions are handed for one request. */
export interface EntryContext {
  /** The calling API key or user (`user:<sub>`); null for an open service. */
  readonly caller: string | null;
  readonly user: UserIdentity | null;
  readonly requestId: string;
  readonly signal: AbortSignal;
  readonly log: Logger;
}

/** One item of a `resources/read` answer: text or base64 `blob`. */
export interface ResourceContents {
  uri: string;
  mimeType?: string;
  text?: string;
  blob?: string;
  _meta?: Record<string, unknown>;
}

/** What MCP lists of every entry: `title`, `description`, `annotations`, `_meta` (an MCP App's CSP, say). */
export interface EntryMetadata {
  title?: string;
  description?: string;
  mimeType?: string;
  annotations?: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Completion values for one argument (`completion/complete`). */
export interface Completion {
  values: string[];
  total?: number;
  hasMore?: boolean;
}

/** `complete(argument, value, context, arguments)`: the values an argument may take, given what is typed so far. */
export type Complete = (argument: string, value: string, context: EntryContext, others: Readonly<Record<string, string>>) => Promise<Completion>;

interface EntryBase {
  readonly source: ToolSource;
  /** What access rules and toolsets match (`<prefix>_<name>` for an upstream's entries). */
  readonly name: string;
  readonly metadata: Readonly<EntryMetadata>;
  /** Pins the definition as the model and the client see it. */
  readonly hash: string;
}

export interface ResourceEntry extends EntryBase {
  readonly kind: 'resource';
  /** The URI clients read and subscribe to (toolport's own, once rewritten). */
  readonly uri: string;
  read(context: EntryContext): Promise<ResourceContents[]>;
  /**
   * Calls `changed` whenever the resource changes, until the returned function is called; absent:
   * it never changes (subscriptions are accepted and stay silent).
   */
  watch?(changed: () => void): () => void;
}

export interface TemplateEntry extends EntryBase {
  readonly kind: 'template';
  /** RFC 6570 level 1: `{var}` matches one path segment, `{+var}` and `{var*}` anything. */
  readonly uriTemplate: string;
  read(uri: string, variables: Readonly<Record<string, string>>, context: EntryContext): Promise<ResourceContents[]>;
  readonly complete?: Complete;
}

export interface PromptArgument {
  name: string;
  description?: string;
  required?: boolean;
}

export interface PromptMessage {
  role: 'user' | 'assistant';
  content: { type: string; [key: string]: unknown };
}

export interface PromptResult {
  description?: string;
  messages: PromptMessage[];
}

export interface PromptEntry extends EntryBase {
  readonly kind: 'prompt';
  readonly arguments: readonly PromptArgument[];
  get(args: Readonly<Record<string, string>>, context: EntryContext): Promise<PromptResult>;
  readonly complete?: Complete;
}

export type CatalogEntry = ResourceEntry | TemplateEntry | PromptEntry;
export type EntryKind = CatalogEntry['kind'];

/** The pin of an entry: over what a client is shown of it. */
export function entryHash(kind: EntryKind, key: string, metadata: EntryMetadata, extra: unknown = null): string {
  return hashJson({ kind, key, metadata, extra });
}

/** Who is asking: what its key or user may see, and the toolset of the endpoint. */
export interface EntryFilter {
  allows(name: string): boolean;
}

/** The key an entry is found by: its URI, its template or its name. */
export function keyOf(entry: CatalogEntry): string {
  return entry.kind === 'resource' ? entry.uri : entry.kind === 'template' ? entry.uriTemplate : entry.name;
}

/**
 * The entries of every source, by kind. `replaceSource` swaps a source's entries in one step
 * (an upstream's list changed); `version` counts changes so lists built from it can be cached.
 */
export class EntryCatalog {
  readonly #entries: Record<EntryKind, Map<string, CatalogEntry>> = { resource: new Map(), template: new Map(), prompt: new Map() };
  #version = 0;

  get version(): number {
    return this.#version;
  }

  /** Whether any entry at all is registered (MCP then declares `prompts`, `completions` and lists them). */
  get empty(): boolean {
    return this.#entries.resource.size + this.#entries.template.size + this.#entries.prompt.size === 0;
  }

  /** Adds one entry; an entry of the same kind and key from another source throws (returns the problem). */
  add(entry: CatalogEntry): string | null {
    const key = keyOf(entry);
    const held = this.#entries[entry.kind].get(key);
    if (held !== undefined && !sameSource(held.source, entry.source)) return `${entry.kind} "${key}" is already registered by ${held.source.label}`;
    if (held !== undefined) return `${entry.kind} "${key}" is registered twice`;
    this.#entries[entry.kind].set(key, Object.freeze(entry));
    this.#version++;
    return null;
  }

  /** Swaps every entry of `source` for `entries` (all kinds); a key another source holds throws (returns the problem), changing nothing. */
  replaceSource(source: ToolSource, entries: readonly CatalogEntry[]): string | null {
    for (const entry of entries) {
      const held = this.#entries[entry.kind].get(keyOf(entry));
      if (held !== undefined && !sameSource(held.source, source)) return `${entry.kind} "${keyOf(entry)}" is already registered by ${held.source.label}`;
    }
    for (const map of Object.values(this.#entries)) for (const [key, entry] of map) if (sameSource(entry.source, source)) map.delete(key);
    for (const entry of entries) this.#entries[entry.kind].set(keyOf(entry), Object.freeze(entry));
    this.#version++;
    return null;
  }

  /** The entries of `kind` the filter lets through (null: every one). */
  list<K extends EntryKind>(kind: K, filter: EntryFilter | null): Extract<CatalogEntry, { kind: K }>[] {
    const all = [...this.#entries[kind].values()] as Extract<CatalogEntry, { kind: K }>[];
    return filter === null ? all : all.filter((entry) => filter.allows(entry.name));
  }

  /** One entry by its key (URI, template or name) when the filter lets it through. */
  get<K extends EntryKind>(kind: K, key: string, filter: EntryFilter | null): Extract<CatalogEntry, { kind: K }> | undefined {
    const entry = this.#entries[kind].get(key) as Extract<CatalogEntry, { kind: K }> | undefined;
    return entry !== undefined && (filter === null || filter.allows(entry.name)) ? entry : undefined;
  }
}
