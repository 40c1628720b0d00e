/** What every tool source kind is handed: the catalog to register into, the file, and a way to clean up. */
import type { Logger } from 'pino';
import type { CredentialDefinitions } from '../credentials/definitions.ts';
import type { Store } from '../store/types.ts';
import type { PluginOptions } from '../tools/plugins.ts';
import type { Provenance } from '../tools/provenance.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { ToolsFile } from './tools-file.ts';
import type { GuardView } from './upstream/guard.ts';
import type { CallHealthView } from './upstream/health.ts';

export interface SourceContext {
  readonly registry: ToolRegistry;
  readonly file: ToolsFile;
  readonly log: Logger;
  /** Runs when the app closes, in reverse order of registration: pools, child processes, timers. */
  onClose(close: () => Promise<void>): void;
  /** The state store: pins of upstream definitions live there (docs/mcp-sources.md, "Pinning definitions"). */
  readonly store: Store;
  /** Definitions that join the catalog at run time are kept by hash here (docs/formats.md). */
  readonly provenance: Provenance;
  /** toolport's version, named to upstreams (an MCP client's clientInfo). */
  readonly version: string;
  /** `credentials:` of the file: what `auth:` and `${credential.<name>}` may name. */
  readonly credentials: CredentialDefinitions;
  /** Where plugin tools run (TOOL_ISOLATION) and the pool that runs the isolated ones. */
  readonly plugins?: PluginOptions;
  /** Adds upstreams whose state /readyz and GET /sources report. */
  reportUpstreams(status: () => readonly UpstreamStatus[]): void;
}

/** An upstream behind a source: its connection (an MCP server's; always up for HTTP and OpenAPI), and what its calls saw. */
export interface UpstreamStatus {
  source: string;
  kind: 'mcp' | 'openapi' | 'http';
  /** Whether its connection is up (a source without one is always up: /readyz names only lost connections). */
  up: boolean;
  /** Why it is down (null while up). */
  reason: string | null;
  /** How its latest calls went. */
  calls: CallHealthView;
  /** Pinned tools whose upstream definition changed and waits for an admin. */
  pending: number;
  /** Its breaker and limits: one per origin for the HTTP tools, one for an OpenAPI source or MCP server. */
  guards: readonly GuardView[];
}
