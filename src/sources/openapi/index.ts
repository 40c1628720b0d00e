/**
 * The `openapi:` section of TOOLS_FILE (docs/tool-sources.md): one tool per included operation of an OpenAPI
 * 3.0/3.1 document, named `<source>_<operationId>` (made valid), forwarded over the shared pool.
 */
import picomatch from 'picomatch';
import type { Dispatcher } from 'undici';
import { callEnd } from '../../tools/context.ts';
import type { ToolContext } from '../../tools/types.ts';
import { fileSource } from '../../tools/source.ts';
import { EntryReader, type RawEntry } from '../entry.ts';
import { lowerCased } from '../http/index.ts';
import { toolNameFor } from '../names.ts';
import { readToolOptions, readToolOverrides, rerunByDefault } from '../tool-options.ts';
import type { SourceContext } from '../types.ts';
import { resultOfAnswer } from '../upstream/answer.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, type UpstreamClient } from '../upstream/client.ts';
import { connectionFailure, endpointOf } from '../upstream/endpoint.ts';
import { upstreamClient } from '../upstream/shared.ts';
import { CallHealth } from '../upstream/health.ts';
import { callsOnlyStatus, UpstreamGuard } from '../upstream/guard.ts';
import { GUARD_KEYS, readGuardSettings } from '../upstream/limits.ts';
import { addCredentialHeaders, credentialHeaders, type CredentialHeaders } from '../upstream/credentials.ts';
import { readCredentialUse } from '../credentials.ts';
import { baseUrlOf, loadDocument } from './document.ts';
import { operationsOf, type Operation } from './operations.ts';
import { buildRequest } from './request.ts';
import { SchemaCompileError } from '../../errors.ts';

const ENTRY_KEYS = ['source', 'spec', 'base_url', 'include', 'headers', 'idempotency', 'on_lost', 'timeout_ms', 'tools', 'max_response_bytes', 'auth', ...GUARD_KEYS];
const MAX_NAMES_SHOWN = 30;

interface Target {
  origin: string;
  /** The base URL's path, without a trailing slash. */
  basePath: string;
  headers: Record<string, string>;
  credentials: CredentialHeaders;
  maxResponseBytes: number;
}

async function forward(client: UpstreamClient, target: Target, toolName: string, operation: Operation, params: Record<string, unknown>, context: ToolContext) {
  const built = buildRequest(toolName, operation, params);
  const headers = client.callHeaders(context, { ...target.headers, ...built.headers });
  if (built.body !== null) headers['content-type'] = 'application/json';
  if (target.credentials.auth !== null || target.credentials.templated.length > 0) await addCredentialHeaders(headers, target.credentials, context);
  let answer;
  try {
    answer = await client.send(
      { origin: target.origin, path: `${target.basePath}${built.path}`, method: operation.method as Dispatcher.HttpMethod, headers, body: built.body, maxResponseBytes: target.maxResponseBytes },
      callEnd(context),
    );
  } catch (err) {
    throw connectionFailure(toolName, err);
  }
  return resultOfAnswer(toolName, answer, target.maxResponseBytes);
}

function listed(names: string[]): string {
  return names.length > MAX_NAMES_SHOWN ? `${names.slice(0, MAX_NAMES_SHOWN).join(', ')} and ${names.length - MAX_NAMES_SHOWN} more` : names.join(', ');
}

/** The operations the `include` globs select; a glob that selects nothing stops the start. */
function included(reader: EntryReader, operations: Operation[]): Operation[] {
  if (!reader.has('include')) return operations;
  const globs = reader.stringList('include');
  const names = operations.map((o) => o.upstreamName);
  const selected = new Set<Operation>();
  for (const glob of globs) {
    const matches = picomatch(glob);
    const found = operations.filter((o) => matches(o.upstreamName));
    if (found.length === 0) reader.fail(`include "${glob}" matches no operation (operations: ${listed(names)})`);
    for (const o of found) selected.add(o);
  }
  return operations.filter((o) => selected.has(o));
}

async function registerSource(entry: RawEntry, context: SourceContext, client: UpstreamClient): Promise<void> {
  const reader = new EntryReader(context.file.path, entry, ENTRY_KEYS);
  const source = reader.string('source');
  const calls = new CallHealth();
  const settings = readGuardSettings(reader);
  const spec = reader.string('spec');
  const loaded = await loadDocument(reader, spec, context.file.folder);
  const baseUrl = baseUrlOf(reader, loaded, reader.optionalString('base_url'));
  const { origin, path } = endpointOf(reader, baseUrl, 'base_url');
  const guard = new UpstreamGuard(origin, `its API at ${origin}`, settings, calls, context.log.child({ source }));
  context.reportUpstreams(() => [callsOnlyStatus(source, 'openapi', calls, [guard])]);
  const configured = reader.stringMap('headers');
  const { auth, uses } = readCredentialUse(reader, configured, context.credentials);
  const { fixed, use } = credentialHeaders(configured, auth);
  const target: Target = {
    origin,
    basePath: path.replace(/\?.*$/, '').replace(/\/+$/, ''),
    headers: { ...lowerCased(fixed), accept: 'application/json, text/plain;q=0.9, */*;q=0.1' },
    credentials: use,
    maxResponseBytes: reader.positiveInteger('max_response_bytes') ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
  const defaults = { ...readToolOptions(reader, reader.raw), ...(uses.length > 0 && { credentials: uses }) };
  const overrides = readToolOverrides(reader);
  const operations = included(reader, operationsOf(loaded.document));
  for (const name of overrides.keys()) {
    if (!operations.some((o) => o.upstreamName === name)) reader.fail(`tools.${name} names no included operation`);
  }
  for (const operation of operations) {
    const toolName = toolNameFor(source, operation.upstreamName);
    if (operation.unsupported !== null) {
      context.log.warn(
        { source, operation: operation.upstreamName, reason: operation.unsupported },
        `OpenAPI operation ${operation.upstreamName} is not offered as a tool: ${operation.unsupported}`,
      );
      continue;
    }
    const definition = {
      name: toolName,
      description: operation.description,
      parameters: operation.parameters,
      ...(operation.result !== undefined && { result: operation.result }),
      ...rerunByDefault({ ...defaults, ...overrides.get(operation.upstreamName) }),
      handler: (params: Record<string, unknown>, toolContext: ToolContext) =>
        guard.run(toolContext, () => forward(client, target, toolName, operation, params, toolContext)),
    };
    try {
      context.registry
        .of(fileSource('openapi', source, `TOOLS_FILE ${context.file.path}: ${reader.where}: operation ${operation.upstreamName}`))
        .registerTool(definition, { schemas: 'upstream', hints: { words: [...operation.tags, operation.summary] } });
    } catch (err) {
      // A published document is taken as it is: one schema no validator can compile costs that
      // operation, not the start.
      if (!(err instanceof SchemaCompileError)) throw err;
      context.log.warn(
        { source, operation: operation.upstreamName, reason: err.message.replace(/^[\s\S]*?tool "[^"]*": /, '') },
        `OpenAPI operation ${operation.upstreamName} is not offered as a tool: ${err.message}`,
      );
      continue;
    }
  }
}

export async function registerOpenApiSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  if (entries.length === 0) return;
  const client = upstreamClient(context);
  for (const entry of entries) await registerSource(entry, context, client);
}
