/**
 * Tool sources (docs/tool-sources.md): TOOLS_FILE turned into ordinary registered tools. Each kind is one
 * module that registers tools whose handler forwards the call; the dispatcher runs them like any
 * other tool, so validation, deadlines, the ledger, sessions and metrics apply without a branch.
 */
import type { Logger } from 'pino';
import type { Store } from '../store/types.ts';
import type { PluginOptions } from '../tools/plugins.ts';
import type { Provenance } from '../tools/provenance.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { EntryReader, type RawEntry } from './entry.ts';
import type { CredentialDefinitions } from '../credentials/definitions.ts';
import { readCredentials } from './credentials.ts';
import { registerMcpSources } from './mcp/index.ts';
import { SOURCE_NAME } from './names.ts';
import { registerPluginSources } from './plugins.ts';
import { readToolsFile, type ToolsFile } from './tools-file.ts';
import type { SourceContext, UpstreamStatus } from './types.ts';
import { readToolsets, type ToolsetDefinition } from '../toolsets/index.ts';
import { ToolsFileError } from '../errors.ts';
import type { UsedVariable } from './variables.ts';

export interface ToolSources {
  /** Closes what the sources hold open (connection pools, child processes), last opened first. */
  close(): Promise<void>;
  /** The upstreams the sources keep connections to (MCP servers), and whether each is up. */
  upstreamStatus(): UpstreamStatus[];
  /** `credentials:` of the file (docs/credentials.md); empty when it declares none. */
  readonly credentials: CredentialDefinitions;
  /** The file's `policy:` rules, as written (src/policy/ compiles them). */
  readonly policy: readonly RawEntry[];
  /** The file's `guardrails:` rules, as written (src/guardrails/ compiles them). */
  readonly guardrails: readonly RawEntry[];
  /** The file's absolute path, as policy errors name it. */
  readonly path: string;
  /** The file's toolsets, checked for shape. */
  readonly toolsets: readonly ToolsetDefinition[];
  /** The `${VAR}`s the file used that may be secrets (src/sources/variables.ts). */
  readonly variables: readonly UsedVariable[];
}

export interface LoadToolSourcesOptions {
  registry: ToolRegistry;
  /** TOOLS_FILE as given (relative to the working directory). */
  file: string;
  log: Logger;
  env?: Readonly<Record<string, string | undefined>>;
  store: Store;
  provenance: Provenance;
  version: string;
  /** Where plugin tools run and the pool for isolated ones. */
  plugins?: PluginOptions;
}

/**
 * `source` of every openapi and mcp entry: valid as a tool-name prefix and unique across both
 * sections; an mcp entry also names exactly one of `command` and `url`.
 */
export function checkSourceNames(file: ToolsFile): void {
  const seen = new Map<string, string>();
  const check = (entry: RawEntry, extra: (reader: EntryReader) => void) => {
    const reader = new EntryReader(file.path, entry, Object.keys((entry.value ?? {}) as object));
    const source = reader.string('source');
    if (!SOURCE_NAME.test(source)) reader.fail(`source must match ${SOURCE_NAME} (it prefixes the tool names)`);
    reader.named(source);
    const earlier = seen.get(source);
    if (earlier !== undefined) reader.fail(`source "${source}" is already used by ${earlier}`);
    seen.set(source, entry.where);
    extra(reader);
  };
  for (const entry of file.openapi) check(entry, () => {});
  for (const entry of file.mcp) {
    check(entry, (reader) => {
      if (reader.has('command') === reader.has('url')) reader.fail('an MCP server needs exactly one of command (stdio) or url (Streamable HTTP)');
    });
  }
}

export async function loadToolSources(options: LoadToolSourcesOptions): Promise<ToolSources> {
  return loadParsedSources(await readToolsFile(options.file, options.env), options);
}

/** The sources of a file already read: every entry registered, or the first problem thrown. */
export async function loadParsedSources(file: ToolsFile, options: Omit<LoadToolSourcesOptions, 'file' | 'env'>): Promise<ToolSources> {
  checkSourceNames(file);
  const credentials = readCredentials(file.path, file.credentials);
  const toolsets = readToolsets(file.toolsets, (message) => {
    throw new ToolsFileError(`TOOLS_FILE ${file.path}: ${message}`);
  });
  const closers: (() => Promise<void>)[] = [];
  const upstreams: (() => readonly UpstreamStatus[])[] = [];
  const context: SourceContext = {
    registry: options.registry,
    file,
    log: options.log,
    onClose: (close) => closers.push(close),
    store: options.store,
    provenance: options.provenance,
    version: options.version,
    reportUpstreams: (status) => upstreams.push(status),
    credentials,
    ...(options.plugins !== undefined && { plugins: options.plugins }),
  };
  const sources: ToolSources = {
    credentials,
    policy: file.policy,
    guardrails: file.guardrails,
    path: file.path,
    toolsets,
    variables: file.variables,
    upstreamStatus: () => upstreams.flatMap((status) => status()),
    async close() {
      for (const close of closers.splice(0).reverse()) {
        await close().catch((err: unknown) => options.log.warn({ err }, 'a tool source did not close cleanly'));
      }
    },
  };
  try {
    await registerPluginSources(file.plugins, context);
    // The HTTP client and the OpenAPI parser are loaded only by a file that uses them.
    if (file.http.length > 0) await (await import('./http/index.ts')).registerHttpTools(file.http, context);
    if (file.openapi.length > 0) await (await import('./openapi/index.ts')).registerOpenApiSources(file.openapi, context);
    await registerMcpSources(file.mcp, context);
  } catch (err) {
    await sources.close();
    throw err;
  }
  return sources;
}
