/**
 * The catalog's resources, resource templates and prompts over MCP: `resources/list`,
 * `resources/read`, `resources/templates/list`, `prompts/list`, `prompts/get` and
 * `completion/complete`, each filtered as `tools/list` is (the caller's access rules, the
 * endpoint's toolset). Toolport's stored results are read here too (docs/large-results.md).
 */
import type { Logger } from 'pino';
import type { Caller } from '../callers/keys.ts';
import type { ResultResources } from '../store/results.ts';
import { resultIdOf } from '../store/results.ts';
import type { ToolsetView } from '../toolsets/index.ts';
import type { CatalogEntry, EntryCatalog, EntryContext, EntryFilter, TemplateEntry } from '../tools/entries.ts';
import { isObject } from '../json.ts';
import { UpstreamRpcError } from '../errors.ts';
import type { Era } from './era.ts';
import { ErrorCode, ProtocolFault, type JsonRpcRequest } from './protocol.ts';
import { templateMatcher } from './uri-template.ts';

/** MCP's "resource not found" error code (the handshake era's). */
const RESOURCE_NOT_FOUND = -32002;
/** The stateless revision's cache hints: the catalog may differ per caller and per deployment. */
export const CACHE_HINTS = { ttlMs: 0, cacheScope: 'private' };

/** What answering needs of the request. */
export interface EntryRequest {
  era: Era;
  caller: Caller | null;
  toolset: ToolsetView | null;
  requestId: string;
  log: Logger;
}

export const ENTRY_METHODS = new Set(['resources/list', 'resources/read', 'resources/templates/list', 'prompts/list', 'prompts/get', 'completion/complete']);

function filterOf({ caller, toolset }: EntryRequest): EntryFilter | null {
  if (caller === null && toolset === null) return null;
  return { allows: (name) => (caller === null || caller.allows(name)) && (toolset === null || toolset.allows(name)) };
}

function contextOf(request: EntryRequest): EntryContext {
  return {
    caller: request.caller?.id ?? null,
    user: request.caller?.user ?? null,
    requestId: request.requestId,
    signal: new AbortController().signal,
    log: request.log,
  };
}

function stringParam(params: Record<string, unknown> | undefined, key: string, method: string): string {
  const value = params?.[key];
  if (typeof value !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, `${method} needs params.${key} (a string)`);
  return value;
}

function stringsOf(value: unknown): Record<string, string> {
  if (!isObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function listed(entry: CatalogEntry): Record<string, unknown> {
  const { _meta, ...metadata } = entry.metadata;
  const shown: Record<string, unknown> = { name: entry.name, ...metadata };
  if (entry.kind === 'resource') shown.uri = entry.uri;
  else if (entry.kind === 'template') shown.uriTemplate = entry.uriTemplate;
  else shown.arguments = entry.arguments;
  if (_meta !== undefined) shown._meta = _meta;
  return shown;
}

export class McpCatalog {
  readonly #entries: EntryCatalog;
  readonly #results: Pick<ResultResources, 'read'> | null;
  readonly #matchers = new Map<string, (uri: string) => Record<string, string> | null>();

  constructor(entries: EntryCatalog, results: Pick<ResultResources, 'read'> | null) {
    this.#entries = entries;
    this.#results = results;
  }

  async request(message: JsonRpcRequest, request: EntryRequest): Promise<Record<string, unknown>> {
    let result: Record<string, unknown>;
    try {
      result = await this.#answer(message, request);
    } catch (err) {
      // A federated entry's server refused: the caller gets the server's own code and message.
      if (err instanceof UpstreamRpcError) throw new ProtocolFault(err.rpcCode, err.message, 400, err.data);
      throw err;
    }
    return request.era === 'stateless' ? { resultType: 'complete', ...result, ...CACHE_HINTS } : result;
  }

  async #answer(message: JsonRpcRequest, request: EntryRequest): Promise<Record<string, unknown>> {
    const filter = filterOf(request);
    switch (message.method) {
      case 'resources/list':
        return { resources: this.#entries.list('resource', filter).map(listed) };
      case 'resources/templates/list':
        return { resourceTemplates: this.#entries.list('template', filter).map(listed) };
      case 'prompts/list':
        return { prompts: this.#entries.list('prompt', filter).map(listed) };
      case 'resources/read':
        return this.#read(stringParam(message.params, 'uri', message.method), request, filter);
      case 'prompts/get':
        return this.#prompt(message.params, request, filter);
      default:
        return this.#complete(message.params, request, filter);
    }
  }

  /** The resource of `uri`, or of a template that matches it. */
  resolve(uri: string, filter: EntryFilter | null): { entry: CatalogEntry; variables: Record<string, string> } | null {
    const resource = this.#entries.get('resource', uri, filter);
    if (resource !== undefined) return { entry: resource, variables: {} };
    for (const template of this.#entries.list('template', filter)) {
      const variables = this.#matcher(template)(uri);
      if (variables !== null) return { entry: template, variables };
    }
    return null;
  }

  #matcher(template: TemplateEntry): (uri: string) => Record<string, string> | null {
    let matcher = this.#matchers.get(template.uriTemplate);
    if (matcher === undefined) this.#matchers.set(template.uriTemplate, (matcher = templateMatcher(template.uriTemplate)));
    return matcher;
  }

  async #read(uri: string, request: EntryRequest, filter: EntryFilter | null): Promise<Record<string, unknown>> {
    const found = this.resolve(uri, filter);
    const context = contextOf(request);
    if (found?.entry.kind === 'resource') return { contents: await found.entry.read(context) };
    if (found?.entry.kind === 'template') return { contents: await found.entry.read(uri, found.variables, context) };
    const id = resultIdOf(uri);
    const kept = id === null || this.#results === null ? null : await this.#results.read(id, request.caller?.id ?? null, request.caller?.admin);
    if (kept !== null) return { contents: [{ uri, mimeType: 'text/plain', text: kept.content }] };
    // 2026-07-28 answers an unknown resource as invalid params; the handshake era had its own code.
    const code = request.era === 'stateless' ? ErrorCode.InvalidParams : RESOURCE_NOT_FOUND;
    throw new ProtocolFault(code, 'Resource not found (results are kept for RESULT_TTL_S, for the caller that made the call)', 400, { uri: uri.slice(0, 200) });
  }

  async #prompt(params: Record<string, unknown> | undefined, request: EntryRequest, filter: EntryFilter | null): Promise<Record<string, unknown>> {
    const name = stringParam(params, 'name', 'prompts/get');
    const prompt = this.#entries.get('prompt', name, filter);
    if (prompt === undefined) throw new ProtocolFault(ErrorCode.InvalidParams, `no prompt ${name.slice(0, 100)}`);
    const args = stringsOf(params?.arguments);
    const missing = prompt.arguments.filter((a) => a.required === true && args[a.name] === undefined).map((a) => a.name);
    if (missing.length > 0) throw new ProtocolFault(ErrorCode.InvalidParams, `prompt ${name} needs the argument(s) ${missing.join(', ')}`);
    return { ...(await prompt.get(args, contextOf(request))) };
  }

  async #complete(params: Record<string, unknown> | undefined, request: EntryRequest, filter: EntryFilter | null): Promise<Record<string, unknown>> {
    const ref = params?.ref;
    const argument = params?.argument;
    if (!isObject(ref) || !isObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string')
      throw new ProtocolFault(ErrorCode.InvalidParams, 'completion/complete needs params.ref and params.argument {name, value}');
    let entry: CatalogEntry | undefined;
    if (ref.type === 'ref/prompt' && typeof ref.name === 'string') entry = this.#entries.get('prompt', ref.name, filter);
    else if (ref.type === 'ref/resource' && typeof ref.uri === 'string') entry = this.#entries.get('template', ref.uri, filter);
    if (entry === undefined) throw new ProtocolFault(ErrorCode.InvalidParams, 'completion/complete: no such prompt or resource template');
    const others = stringsOf(isObject(params?.context) ? params.context.arguments : undefined);
    const complete = entry.kind === 'resource' ? undefined : entry.complete;
    const completion = complete === undefined ? { values: [] } : await complete(argument.name, argument.value, contextOf(request), others);
    return { completion };
  }
}
