/**
 * An `mcp:` entry of TOOLS_FILE (docs/mcp-sources.md), checked: a stdio server (`command`, `args`, `env`,
 * `cwd`) or a Streamable HTTP one (`url`, `headers`), `pin`, its breaker and limits, and the per-source and per-tool
 * `idempotency`, `timeout_ms` (and per tool `annotations`), read as for openapi sources.
 */
import { isAbsolute, resolve } from 'node:path';
import { EntryReader, type RawEntry } from '../entry.ts';
import type { CredentialDefinitions } from '../../credentials/definitions.ts';
import { readCredentialUse } from '../credentials.ts';
import { readToolOptions, readToolOverrides, type ToolOptions } from '../tool-options.ts';
import { credentialHeaders, type CredentialHeaders } from '../upstream/credentials.ts';
import type { ToolsFile } from '../tools-file.ts';
import { GUARD_KEYS, readGuardSettings, type GuardSettings } from '../upstream/limits.ts';
import { fileSource, type ToolSource } from '../../tools/source.ts';

export type McpServerConfig =
  | { kind: 'stdio'; command: string; args: readonly string[]; env: Record<string, string>; cwd: string }
  | { kind: 'http'; url: string; headers: Record<string, string>; credentials: CredentialHeaders; uses: readonly string[] };

export interface McpSourceConfig {
  /** The prefix of its tools' names: `<source>_<tool>`. */
  source: string;
  /** What its tools, resources and prompts are registered as (errors name its label: `TOOLS_FILE <path>: mcp[0] "files"`). */
  origin: ToolSource;
  server: McpServerConfig;
  pin: boolean;
  /** Applies to every tool of the source unless `tools` overrides it. */
  defaults: ToolOptions;
  /** Overrides by the upstream's own tool name. */
  tools: ReadonlyMap<string, ToolOptions>;
  /** The server's breaker and limits. */
  guard: GuardSettings;
}

const KEYS = ['source', 'command', 'args', 'env', 'cwd', 'url', 'headers', 'pin', 'idempotency', 'on_lost', 'timeout_ms', 'tools', 'auth', ...GUARD_KEYS];

export function readMcpEntry(entry: RawEntry, file: ToolsFile, credentials: CredentialDefinitions = new Map()): McpSourceConfig {
  const reader = new EntryReader(file.path, entry, KEYS);
  const source = reader.string('source');
  const pin = reader.raw.pin;
  if (pin !== undefined && typeof pin !== 'boolean') reader.fail('pin must be true or false');
  let server: McpServerConfig;
  if (reader.has('command')) {
    if (reader.has('headers')) reader.fail('headers belong to a url server, not a command');
    if (reader.has('auth')) reader.fail('auth belongs to a url server, not a command');
    const cwd = reader.optionalString('cwd');
    server = {
      kind: 'stdio',
      command: reader.string('command'),
      args: reader.has('args') ? reader.stringList('args') : [],
      env: reader.stringMap('env'),
      // A server started with a relative path finds it from the tools file's folder.
      cwd: cwd === undefined ? file.folder : isAbsolute(cwd) ? cwd : resolve(file.folder, cwd),
    };
  } else {
    for (const key of ['args', 'env', 'cwd']) if (reader.has(key)) reader.fail(`${key} belongs to a command server, not a url`);
    const url = reader.string('url');
    let parsed: URL | null;
    try {
      parsed = new URL(url);
    } catch {
      parsed = null;
    }
    if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) reader.fail('url must be an http(s) URL');
    const configured = reader.stringMap('headers');
    const { auth, uses } = readCredentialUse(reader, configured, credentials);
    const { fixed, use } = credentialHeaders(configured, auth);
    server = { kind: 'http', url, headers: fixed, credentials: use, uses };
  }
  const defaults = readToolOptions(reader, { idempotency: reader.raw.idempotency, on_lost: reader.raw.on_lost, timeout_ms: reader.raw.timeout_ms });
  return {
    source,
    origin: fileSource('mcp', source, `TOOLS_FILE ${file.path}: ${reader.where}`),
    server,
    pin: pin === true,
    defaults,
    tools: readToolOverrides(reader),
    guard: readGuardSettings(reader),
  };
}
