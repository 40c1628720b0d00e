/**
 * One `mcp:` source: its server's tools kept in the catalog as `<source>_<tool>`, replaced when
 * the server's list changes, each forwarding its calls as tools/call. With `pin`, a definition
 * that differs from the one pinned in the store is not served: the pinned one stays listed and
 * its calls answer tool_changed until an admin accepts the change (on any replica: while a change
 * is pending, the pins are read again every second).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import type { Store } from '../../store/types.ts';
import { callEnd } from '../../tools/context.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { Provenance } from '../../tools/provenance.ts';
import type { RegisteredTool, RegisterOptions, ToolRegistry } from '../../tools/registry.ts';
import type { ToolSource } from '../../tools/source.ts';
import type { HandlerReturn, ToolContext, ToolDefinition } from '../../tools/types.ts';
import type { UpstreamStatus } from '../types.ts';
import type { McpSourceConfig } from './config.ts';
import { toolResultOf, upstreamDefinition, type UpstreamDefinition } from './definitions.ts';
import { McpUpstream } from './upstream.ts';
import { McpFederation } from './federation.ts';
import type { StatelessUpstream } from './stateless.ts';
import { addCredentialHeaders } from '../upstream/credentials.ts';
import { CallHealth } from '../upstream/health.ts';
import { UpstreamGuard } from '../upstream/guard.ts';
import { UpstreamDown } from '../../errors.ts';

const PIN_POLL_MS = 1000;
/** MCP servers' schemas are compiled leniently, on first use. */
const UPSTREAM_TOOLS: RegisterOptions = { schemas: 'upstream' };

export interface McpSourceDeps {
  registry: ToolRegistry;
  store: Store;
  provenance: Provenance;
  log: Logger;
  version: string;
  /** The app's HTTP connection pool, for servers over HTTP (null when none is). */
  http: Dispatcher | null;
}

export class McpSource {
  readonly config: McpSourceConfig;
  readonly upstream: McpUpstream;
  /** The server's resources, templates and prompts in the catalog. */
  readonly federation: McpFederation;
  readonly #deps: McpSourceDeps;
  readonly #log: Logger;
  /** Pinned tools whose upstream definition is waiting for an admin: name → the upstream's hash. */
  #pending = new Map<string, string>();
  #pollTimer: NodeJS.Timeout | null = null;
  readonly #calls = new CallHealth();
  readonly #guard: UpstreamGuard;

  constructor(config: McpSourceConfig, deps: McpSourceDeps) {
    this.config = config;
    this.#deps = deps;
    this.#log = deps.log.child({ upstream: config.source });
    const server = config.server;
    this.#guard = new UpstreamGuard(
      server.kind === 'http' ? new URL(server.url).origin : 'stdio',
      `its MCP server "${config.source}"`,
      config.guard,
      this.#calls,
      this.#log,
    );
    this.federation = new McpFederation(config, deps.registry.entries, deps.store, this.#log);
    const listener = {
      listed: (tools: Tool[], from: Client | StatelessUpstream) => this.#apply(tools, from),
      updated: (uri: string) => this.federation.onUpdated(uri),
    };
    this.upstream = new McpUpstream(config.server, this.#log, deps.version, listener, deps.http);
  }

  /** What this source's tools are registered as (its label named in clash errors). */
  get origin(): ToolSource {
    return this.config.origin;
  }

  status(): UpstreamStatus {
    const next = this.upstream.nextAttemptInS;
    const again = this.config.server.kind === 'stdio' ? 'started again' : 'connected again';
    return {
      source: this.config.source,
      kind: 'mcp',
      up: this.upstream.up,
      reason: next === null ? this.upstream.downReason : `${this.upstream.downReason} (${again} in ${next} s)`,
      calls: this.#calls.view(),
      pending: this.#pending.size + this.federation.pending.size,
      guards: [this.#guard.view()],
    };
  }

  /** A pin of one of this source's tools was accepted on this replica: serve it now. */
  accepted(name: string): void {
    if (this.#pending.has(name)) void this.upstream.refresh();
  }

  async close(): Promise<void> {
    this.#stopPolling();
    await this.upstream.close();
  }

  /** The server's current lists become the source's tools and entries (after pin checks). */
  async #apply(tools: readonly Tool[], from: Client | StatelessUpstream): Promise<void> {
    await this.#applyTools(tools);
    await this.federation
      .apply(from, tools)
      .catch((err: unknown) => this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'MCP resources and prompts not read'));
  }

  async #applyTools(tools: readonly Tool[]): Promise<void> {
    const { registry, provenance } = this.#deps;
    const offered: { definition: ToolDefinition; checked: RegisteredTool; upstreamName: string }[] = [];
    for (const tool of tools) {
      const definition = this.#forwarding(upstreamDefinition(tool, this.config), tool.name);
      try {
        offered.push({
          definition,
          checked: registry.check(definition, this.origin, UPSTREAM_TOOLS),
          upstreamName: tool.name,
        });
      } catch (err) {
        this.#log.warn({ tool: tool.name, problem: err instanceof Error ? err.message : String(err) }, 'MCP tool left out of the catalog');
      }
    }
    // Every upstream definition is kept by hash, served or not (a pending one is listed by /versions).
    await provenance
      .record(offered.map((o) => o.checked))
      .catch((err: unknown) => this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'MCP tool definitions not recorded'));
    const served: ToolDefinition[] = [];
    const pending = new Map<string, string>();
    for (const { definition, checked } of offered) {
      if (!this.config.pin) {
        served.push(definition);
        continue;
      }
      const pin = await this.#deps.store.pinSeen(checked.name, checked.hash);
      if (pin.current === checked.hash) served.push(definition);
      else {
        pending.set(checked.name, checked.hash);
        served.push(await this.#pinned(definition, pin.current, checked.hash));
      }
    }
    const registered = registry.replaceSource(this.origin, served, UPSTREAM_TOOLS);
    this.#pending = pending;
    this.#log.info({ tools: registered.length, pending: [...pending.keys()] }, 'MCP tools in the catalog');
    if (pending.size > 0) this.#startPolling();
    else this.#stopPolling();
  }

  /** The definition served while a change is pending: the pinned one, whose calls answer tool_changed. */
  async #pinned(upstream: ToolDefinition, pinnedHash: string, upstreamHash: string): Promise<ToolDefinition> {
    const kept = await this.#deps.store.definitionByHash(pinnedHash);
    const pinned = kept === null ? null : (JSON.parse(kept.definition) as UpstreamDefinition);
    const source = this.config.source;
    const name = upstream.name;
    const shown: ToolDefinition = { ...upstream };
    if (pinned !== null) {
      shown.description = pinned.description;
      shown.parameters = pinned.parameters;
      if (pinned.result === undefined) delete shown.result;
      else shown.result = pinned.result;
    }
    return {
      ...shown,
      handler() {
        throw new ToolFailure(
          'tool_changed',
          `Tool "${name}" is unavailable until a person reviews it: its MCP server "${source}" changed its definition, and this source is pinned. Do not retry it now; take another approach.`,
          `pinned definition ${pinnedHash}; the server now serves ${upstreamHash}, pending review`,
        );
      },
    };
  }

  #forwarding(definition: UpstreamDefinition, upstreamName: string): ToolDefinition {
    const upstream = this.upstream;
    const server = this.config.server;
    const credentials = server.kind === 'http' && server.uses.length > 0 ? server.credentials : null;
    const guard = this.#guard;
    return {
      ...definition,
      ...(credentials !== null && server.kind === 'http' && { credentials: [...server.uses] }),
      handler: (params: Record<string, unknown>, context: ToolContext): Promise<HandlerReturn> => {
        // A server known to be down answers at once; its restart has a backoff of its own, so the breaker does not count it.
        if (!upstream.up) return Promise.reject(this.#down(definition.name, context, upstream.downReason ?? 'not connected'));
        return guard.run(context, async () => {
          let answer;
          try {
            const options = { end: callEnd(context), deadline: context.deadline, progress: context };
            if (credentials === null) answer = await upstream.callTool(upstreamName, params, options);
            else {
              const headers: Record<string, string> = {};
              await addCredentialHeaders(headers, credentials, context);
              answer = await upstream.callTool(upstreamName, params, { ...options, headers });
            }
          } catch (err) {
            if (!(err instanceof UpstreamDown)) throw err;
            throw this.#notAnswering(definition.name, err.message);
          }
          return toolResultOf(answer, definition.name);
        });
      },
    };
  }

  #notAnswering(toolName: string, reason: string): ToolFailure {
    const source = this.config.source;
    const again = this.config.server.kind === 'stdio' ? 'toolport restarts it' : 'toolport reconnects to it';
    return new ToolFailure(
      'upstream_unavailable',
      `Tool "${toolName}" is unavailable now: its MCP server "${source}" is not answering. Retrying in a little while may help (${again}).`,
      `MCP server "${source}": ${reason}`,
    );
  }

  /** A call to a server that is down: counted in its health, answered at once. */
  #down(toolName: string, context: ToolContext, reason: string): ToolFailure {
    const failure = this.#notAnswering(toolName, reason);
    this.#calls.settle(context, failure);
    return failure;
  }

  #startPolling(): void {
    if (this.#pollTimer !== null) return;
    this.#pollTimer = setInterval(() => void this.#checkPins(), PIN_POLL_MS);
    this.#pollTimer.unref();
  }

  #stopPolling(): void {
    if (this.#pollTimer !== null) clearInterval(this.#pollTimer);
    this.#pollTimer = null;
  }

  /** Another replica may have accepted a pending change: serve it once the store says so. */
  async #checkPins(): Promise<void> {
    try {
      for (const [name, upstreamHash] of this.#pending) {
        const pin = await this.#deps.store.toolPin(name);
        if (pin?.current === upstreamHash) {
          await this.upstream.refresh();
          return;
        }
      }
    } catch (err) {
      this.#log.debug({ err: err instanceof Error ? err.message : String(err) }, 'pins not read');
    }
  }
}
