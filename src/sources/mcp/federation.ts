/**
 * An upstream MCP server's resources, resource templates and prompts in the catalog, served like
 * its tools (docs/mcp-sources.md, "Federation"): named `<source>_<name>`, their URIs kept behind
 * the prefix `toolport://<source>/` (the upstream's own URI follows it, so the mapping reverses),
 * pinned by hash when the source is, reads, prompts and completions forwarded, subscriptions
 * relayed. An MCP App's interface (a tool's `_meta.ui.resourceUri`) is named after its tool, so
 * the access rules and toolsets that hide the tool hide its interface too.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ErrorCode, McpError, type Prompt, type Resource, type ResourceTemplate, type Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Store } from '../../store/types.ts';
import {
  entryHash,
  keyOf,
  type CatalogEntry,
  type Complete,
  type Completion,
  type EntryCatalog,
  type EntryContext,
  type EntryMetadata,
  type PromptMessage,
  type ResourceContents,
} from '../../tools/entries.ts';
import { isObject } from '../../json.ts';
import { toolNameFor } from '../names.ts';
import type { McpSourceConfig } from './config.ts';
import { ANY_RESULT } from './call-result.ts';
import { StatelessError, StatelessUpstream } from './stateless.ts';
import { UpstreamRpcError } from '../../errors.ts';

const MAX_PAGES = 100;
const REQUEST_TIMEOUT_MS = 30_000;
/** The older key ext-apps still sets beside `_meta.ui.resourceUri`. */
const LEGACY_UI_KEY = 'ui/resourceUri';

/** Toolport's URI of an upstream's resource (or template): reversible by `upstreamUri`. */
export function ownUri(source: string, uri: string): string {
  return `toolport://${source}/${uri}`;
}

/** The upstream's own URI behind one of toolport's, or null when it is not this source's. */
export function upstreamUri(source: string, uri: string): string | null {
  const prefix = `toolport://${source}/`;
  return uri.startsWith(prefix) ? uri.slice(prefix.length) : null;
}

/** The `ui://` interface a tool links (`_meta.ui.resourceUri`, or the older `_meta["ui/resourceUri"]`). */
export function uiLinkOf(meta: unknown): string | null {
  if (!isObject(meta)) return null;
  const link = isObject(meta.ui) ? meta.ui.resourceUri : meta[LEGACY_UI_KEY];
  return typeof link === 'string' ? link : null;
}

/** A tool's `_meta` with its interface link rewritten into toolport's namespace. */
export function federatedMeta(meta: Record<string, unknown>, source: string): Record<string, unknown> {
  const link = uiLinkOf(meta);
  if (link === null) return meta;
  const rewritten = { ...meta };
  if (isObject(meta.ui)) rewritten.ui = { ...meta.ui, resourceUri: ownUri(source, link) };
  if (typeof meta[LEGACY_UI_KEY] === 'string') rewritten[LEGACY_UI_KEY] = ownUri(source, meta[LEGACY_UI_KEY]);
  return rewritten;
}

function metadataOf(item: Resource | ResourceTemplate | Prompt): EntryMetadata {
  const metadata: EntryMetadata = {};
  const given = item as Record<string, unknown>;
  for (const key of ['title', 'description', 'mimeType', 'annotations', '_meta'] as const) if (given[key] !== undefined) metadata[key] = given[key] as never;
  return metadata;
}

/** What the entries are read through: a handshake-era connection or a stateless server, alike. */
export interface EntryUpstream {
  readonly capabilities: Record<string, unknown>;
  request(method: string, params: Record<string, unknown>, options: { timeoutMs: number; signal?: AbortSignal }): Promise<Record<string, unknown>>;
}

/** One per connection, so that a new connection is told from a list that changed. */
const entryUpstreams = new WeakMap<Client | StatelessUpstream, EntryUpstream>();

/** The server's own JSON-RPC error, relayed with its code and message; anything else (a timeout, a lost connection) as it is. */
function relayed(err: unknown): never {
  if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout)
    throw new UpstreamRpcError(err.code, err.message.replace(/^MCP error -?\d+: /, ''), err.data);
  if (err instanceof StatelessError) throw new UpstreamRpcError(err.code, err.message);
  throw err;
}

function entryUpstreamOf(from: Client | StatelessUpstream): EntryUpstream {
  let upstream = entryUpstreams.get(from);
  if (upstream === undefined) {
    upstream =
      from instanceof StatelessUpstream
        ? {
            get capabilities() {
              return from.capabilities;
            },
            request: (method, params, options) => from.request(method, params, options).catch(relayed),
          }
        : {
            get capabilities() {
              return (from.getServerCapabilities() ?? {}) as Record<string, unknown>;
            },
            request: (method, params, options) =>
              (
                from.request({ method, params } as never, ANY_RESULT, {
                  timeout: options.timeoutMs,
                  ...(options.signal !== undefined && { signal: options.signal }),
                }) as unknown as Promise<Record<string, unknown>>
              ).catch(relayed),
          };
    entryUpstreams.set(from, upstream);
  }
  return upstream;
}

/** Every page of a list (`key`: resources, resourceTemplates, prompts). */
async function allPages<T>(upstream: EntryUpstream, method: string, key: string): Promise<T[]> {
  const items: T[] = [];
  let cursor: unknown;
  for (let page = 0; page < MAX_PAGES; page++) {
    const listed = await upstream.request(method, typeof cursor === 'string' ? { cursor } : {}, { timeoutMs: REQUEST_TIMEOUT_MS });
    if (Array.isArray(listed[key])) items.push(...(listed[key] as T[]));
    cursor = listed.nextCursor;
    if (typeof cursor !== 'string') break;
  }
  return items;
}

export class McpFederation {
  readonly #config: McpSourceConfig;
  readonly #catalog: EntryCatalog;
  readonly #store: Store;
  readonly #log: Logger;
  /** The connection the entries read through; replaced at each (re)connection. */
  #client: EntryUpstream | null = null;
  /** Watchers of the upstream's resources by the upstream's URI (a subscription is relayed while one watches). */
  readonly #watchers = new Map<string, Set<() => void>>();
  /** Pinned entries whose definition changed and waits for an admin: pin key → the upstream's hash. */
  pending = new Map<string, string>();

  constructor(config: McpSourceConfig, catalog: EntryCatalog, store: Store, log: Logger) {
    this.#config = config;
    this.#catalog = catalog;
    this.#store = store;
    this.#log = log;
  }

  /** Relays the upstream's resource updates to the watchers (set on each new connection). */
  onUpdated(uri: string): void {
    for (const changed of this.#watchers.get(uri) ?? []) changed();
  }

  /** The server's lists (read again on each connection and list_changed) become the source's entries. */
  async apply(from: Client | StatelessUpstream, tools: readonly Tool[]): Promise<void> {
    const client = entryUpstreamOf(from);
    const capabilities = client.capabilities;
    const fresh = this.#client !== client;
    this.#client = client;
    const entries: CatalogEntry[] = [];
    const links = new Map<string, string>();
    for (const tool of tools) {
      const link = uiLinkOf(tool._meta);
      if (link !== null && !links.has(link)) links.set(link, toolNameFor(this.#config.source, tool.name));
    }
    if (capabilities.resources !== undefined) {
      const resources = await allPages<Resource>(client, 'resources/list', 'resources');
      const templates = await allPages<ResourceTemplate>(client, 'resources/templates/list', 'resourceTemplates');
      for (const resource of resources) entries.push(this.#resource(resource, links.get(resource.uri)));
      // An interface a tool links but the server does not list is still served, under its tool.
      for (const [uri, tool] of links) if (!resources.some((r) => r.uri === uri)) entries.push(this.#resource({ uri, name: uri }, tool));
      for (const template of templates) entries.push(this.#template(template));
    }
    if (capabilities.prompts !== undefined) {
      const prompts = await allPages<Prompt>(client, 'prompts/list', 'prompts');
      for (const prompt of prompts) entries.push(this.#prompt(prompt));
    }
    const served = this.#config.pin ? await this.#pinned(entries) : entries;
    const problem = this.#catalog.replaceSource(this.#config.origin, served);
    if (problem !== null) this.#log.warn({ problem }, 'MCP resources and prompts left out of the catalog');
    if (fresh) {
      // A new connection has no subscriptions yet: those still watched are made again.
      for (const uri of this.#watchers.keys()) void this.#subscribe(uri, true);
    }
  }

  /** The served entries: a pinned one whose hash differs from its pin waits for an admin. */
  async #pinned(entries: CatalogEntry[]): Promise<CatalogEntry[]> {
    const served: CatalogEntry[] = [];
    const pending = new Map<string, string>();
    for (const entry of entries) {
      const key = `${this.#config.source}:${entry.kind}:${keyOf(entry)}`;
      const pin = await this.#store.pinSeen(key, entry.hash);
      if (pin.current === entry.hash) served.push(entry);
      else pending.set(key, entry.hash);
    }
    this.pending = pending;
    return served;
  }

  #connected(): EntryUpstream {
    if (this.#client === null) throw new Error(`the MCP server "${this.#config.source}" is not connected`);
    return this.#client;
  }

  #contents(contents: readonly ResourceContents[]): ResourceContents[] {
    return contents.map((item) => ({ ...item, uri: ownUri(this.#config.source, item.uri) }));
  }

  async #read(uri: string, context: EntryContext): Promise<ResourceContents[]> {
    const read = await this.#connected().request('resources/read', { uri }, { signal: context.signal, timeoutMs: REQUEST_TIMEOUT_MS });
    return this.#contents(Array.isArray(read.contents) ? (read.contents as ResourceContents[]) : []);
  }

  #completer(ref: { type: 'ref/prompt'; name: string } | { type: 'ref/resource'; uri: string }): Complete {
    return async (name, value, context, others) => {
      const params = { ref, argument: { name, value }, ...(Object.keys(others).length > 0 && { context: { arguments: { ...others } } }) };
      const answer = await this.#connected().request('completion/complete', params, { signal: context.signal, timeoutMs: REQUEST_TIMEOUT_MS });
      return isObject(answer.completion) && Array.isArray(answer.completion.values) ? (answer.completion as unknown as Completion) : { values: [] };
    };
  }

  /** `tool`: the catalog name of the tool whose interface this is (the entry is filtered as that tool). */
  #resource(resource: Resource, tool: string | undefined): CatalogEntry {
    const source = this.#config.source;
    const uri = ownUri(source, resource.uri);
    const metadata = metadataOf(resource);
    const resources = this.#client?.capabilities.resources;
    const subscribable = isObject(resources) && resources.subscribe === true;
    return {
      kind: 'resource',
      source: this.#config.origin,
      name: tool ?? toolNameFor(source, resource.name),
      metadata,
      hash: entryHash('resource', uri, metadata),
      uri,
      read: (context) => this.#read(resource.uri, context),
      ...(subscribable && { watch: (changed: () => void) => this.#watch(resource.uri, changed) }),
    };
  }

  #template(template: ResourceTemplate): CatalogEntry {
    const source = this.#config.source;
    const uriTemplate = ownUri(source, template.uriTemplate);
    const metadata = metadataOf(template);
    return {
      kind: 'template',
      source: this.#config.origin,
      name: toolNameFor(source, template.name),
      metadata,
      hash: entryHash('template', uriTemplate, metadata),
      uriTemplate,
      read: (uri, _variables, context) => this.#read(upstreamUri(source, uri) ?? uri, context),
      complete: this.#completer({ type: 'ref/resource', uri: template.uriTemplate }),
    };
  }

  #prompt(prompt: Prompt): CatalogEntry {
    const name = toolNameFor(this.#config.source, prompt.name);
    const metadata = metadataOf(prompt);
    const args = (prompt.arguments ?? []).map((a) => ({ ...a }));
    return {
      kind: 'prompt',
      source: this.#config.origin,
      name,
      metadata,
      hash: entryHash('prompt', name, metadata, args),
      arguments: args,
      get: async (given, context) => {
        const answer = await this.#connected().request(
          'prompts/get',
          { name: prompt.name, arguments: { ...given } },
          { signal: context.signal, timeoutMs: REQUEST_TIMEOUT_MS },
        );
        const messages = Array.isArray(answer.messages) ? (answer.messages as PromptMessage[]) : [];
        return { ...(typeof answer.description === 'string' && { description: answer.description }), messages: messages.map((m) => this.#message(m)) };
      },
      complete: this.#completer({ type: 'ref/prompt', name: prompt.name }),
    };
  }

  /** A prompt message's embedded resource keeps a URI the caller can read back through toolport. */
  #message(message: { role: 'user' | 'assistant'; content: { type: string } }): PromptMessage {
    const content = message.content as { type: string; resource?: { uri: string } };
    if (content.type !== 'resource' || content.resource === undefined) return message as PromptMessage;
    return { role: message.role, content: { ...content, resource: { ...content.resource, uri: ownUri(this.#config.source, content.resource.uri) } } };
  }

  #watch(uri: string, changed: () => void): () => void {
    let watchers = this.#watchers.get(uri);
    if (watchers === undefined) {
      this.#watchers.set(uri, (watchers = new Set()));
      void this.#subscribe(uri, true);
    }
    watchers.add(changed);
    return () => {
      watchers.delete(changed);
      if (watchers.size > 0 || this.#watchers.get(uri) !== watchers) return;
      this.#watchers.delete(uri);
      void this.#subscribe(uri, false);
    };
  }

  async #subscribe(uri: string, on: boolean): Promise<void> {
    try {
      const client = this.#connected();
      await client.request(on ? 'resources/subscribe' : 'resources/unsubscribe', { uri }, { timeoutMs: REQUEST_TIMEOUT_MS });
    } catch (err) {
      this.#log.debug({ uri, err: err instanceof Error ? err.message : String(err) }, 'MCP subscription not relayed');
    }
  }
}
