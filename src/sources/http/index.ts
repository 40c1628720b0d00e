/**
 * The `http:` section of TOOLS_FILE (docs/tool-sources.md): one tool per entry, any language behind the URL.
 * The validated arguments go as the JSON body to the configured endpoint; the answer is mapped
 * by src/sources/upstream/answer.ts.
 */
import type { Dispatcher } from 'undici';
import { callEnd } from '../../tools/context.ts';
import type { ToolContext } from '../../tools/types.ts';
import { fileSource } from '../../tools/source.ts';
import { EntryReader, type RawEntry } from '../entry.ts';
import { readToolOptions, rerunByDefault } from '../tool-options.ts';
import type { SourceContext } from '../types.ts';
import { resultOfAnswer } from '../upstream/answer.ts';
import { DEFAULT_MAX_RESPONSE_BYTES, UpstreamClient, type UpstreamRequest } from '../upstream/client.ts';
import { upstreamClient } from '../upstream/shared.ts';
import { CallHealth } from '../upstream/health.ts';
import { callsOnlyStatus, UpstreamGuard } from '../upstream/guard.ts';
import { DEFAULT_GUARD, describeGuard, GUARD_KEYS, readGuardSettings, setsGuard, type GuardSettings } from '../upstream/limits.ts';
import { connectionFailure, endpointOf } from '../upstream/endpoint.ts';
import { addCredentialHeaders, credentialHeaders, type CredentialHeaders } from '../upstream/credentials.ts';
import { readCredentialUse } from '../credentials.ts';

const ENTRY_KEYS = [
  'name',
  'description',
  'parameters',
  'result',
  'examples',
  'idempotency',
  'on_lost',
  'annotations',
  'timeout_ms',
  'endpoint',
  'max_response_bytes',
  'auth',
  ...GUARD_KEYS,
];
const ENDPOINT_KEYS = ['url', 'method', 'headers'];
/** Methods that carry the arguments as a JSON body. */
const METHODS = ['POST', 'PUT', 'PATCH'];

interface HttpTool {
  name: string;
  origin: string;
  path: string;
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  credentials: CredentialHeaders;
  maxResponseBytes: number;
}

async function forward(client: UpstreamClient, tool: HttpTool, params: Record<string, unknown>, context: ToolContext) {
  const headers = client.callHeaders(context, tool.headers);
  if (tool.credentials.auth !== null || tool.credentials.templated.length > 0) await addCredentialHeaders(headers, tool.credentials, context);
  const request: UpstreamRequest = {
    origin: tool.origin,
    path: tool.path,
    method: tool.method,
    headers,
    body: JSON.stringify(params),
    maxResponseBytes: tool.maxResponseBytes,
  };
  let answer;
  try {
    answer = await client.send(request, callEnd(context));
  } catch (err) {
    throw connectionFailure(tool.name, err);
  }
  return resultOfAnswer(tool.name, answer, tool.maxResponseBytes);
}

/** One entry read: its tool, and what it sets for its origin's guards (null: nothing). */
interface ReadEntry {
  reader: EntryReader;
  tool: HttpTool;
  uses: string[];
  guard: GuardSettings | null;
}

function readEntry(entry: RawEntry, context: SourceContext): ReadEntry {
  const reader = new EntryReader(context.file.path, entry, ENTRY_KEYS);
  const name = reader.string('name');
  reader.named(name);
  const endpoint = new EntryReader(context.file.path, { where: `${reader.where}: endpoint`, value: reader.object('endpoint') }, ENDPOINT_KEYS);
  const { origin, path } = endpointOf(endpoint, endpoint.string('url'), 'url');
  const method = (endpoint.optionalString('method') ?? 'POST').toUpperCase();
  if (!METHODS.includes(method)) endpoint.fail(`method must be one of ${METHODS.join(', ')} (the arguments are sent as a JSON body)`);
  const configured = endpoint.stringMap('headers');
  const { auth, uses } = readCredentialUse(reader, configured, context.credentials);
  const { fixed, use } = credentialHeaders(configured, auth);
  const tool: HttpTool = {
    name,
    origin,
    path,
    method: method as Dispatcher.HttpMethod,
    headers: { ...lowerCased(fixed), 'content-type': 'application/json', accept: 'application/json, text/plain;q=0.9, */*;q=0.1' },
    credentials: use,
    maxResponseBytes: reader.positiveInteger('max_response_bytes') ?? DEFAULT_MAX_RESPONSE_BYTES,
  };
  return { reader, tool, uses, guard: setsGuard(reader) ? readGuardSettings(reader) : null };
}

/** One guard per origin: the tools of an origin share it, and the entries that set its limits must agree. */
function guardsByOrigin(read: readonly ReadEntry[], calls: CallHealth, context: SourceContext): Map<string, UpstreamGuard> {
  const settings = new Map<string, { guard: GuardSettings; where: string }>();
  for (const { reader, tool, guard } of read) {
    if (guard === null) continue;
    const earlier = settings.get(tool.origin);
    if (earlier !== undefined && describeGuard(earlier.guard) !== describeGuard(guard)) {
      reader.fail(
        `its limits (${describeGuard(guard)}) differ from those ${earlier.where} sets for the same origin ${tool.origin}; the tools of one origin share them`,
      );
    }
    settings.set(tool.origin, { guard, where: reader.where });
  }
  const guards = new Map<string, UpstreamGuard>();
  for (const { tool } of read) {
    if (guards.has(tool.origin)) continue;
    const guard = settings.get(tool.origin)?.guard ?? DEFAULT_GUARD;
    guards.set(tool.origin, new UpstreamGuard(tool.origin, `its endpoint ${tool.origin}`, guard, calls, context.log));
  }
  return guards;
}

export async function registerHttpTools(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  if (entries.length === 0) return;
  const client = upstreamClient(context);
  // The HTTP tools are one upstream in the health report: each has its own endpoint, named by its failures.
  const calls = new CallHealth();
  const read = entries.map((entry) => readEntry(entry, context));
  const guards = guardsByOrigin(read, calls, context);
  context.reportUpstreams(() => [callsOnlyStatus('http', 'http', calls, [...guards.values()])]);
  for (const { reader, tool, uses } of read) {
    const raw = reader.raw;
    const guard = guards.get(tool.origin)!;
    context.registry.of(fileSource('http', 'http', `TOOLS_FILE ${context.file.path}: ${reader.where.replace(/ ".*"$/, '')}`)).registerTool({
      name: tool.name,
      description: raw.description as string,
      parameters: raw.parameters as Record<string, unknown>,
      ...(raw.result !== undefined && { result: raw.result as Record<string, unknown> }),
      ...(raw.examples !== undefined && { examples: raw.examples as never }),
      ...rerunByDefault(readToolOptions(reader, raw)),
      ...(uses.length > 0 && { credentials: uses }),
      handler: (params, toolContext) => guard.run(toolContext, () => forward(client, tool, params, toolContext)),
    });
  }
}

export function lowerCased(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}
