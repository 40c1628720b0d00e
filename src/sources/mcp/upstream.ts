/**
 * One MCP server behind toolport, reached with the official SDK client over transports of our own
 * (http-transport.ts on undici, stdio-transport.ts): a stdio server runs as a
 * supervised child process (its stderr goes to the log; it is restarted with backoff when it exits
 * and killed with the service), a Streamable HTTP server is reconnected with the same backoff
 * when it stops answering. The tool list is read at each connection and on list_changed.
 */
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import type { Dispatcher } from 'undici';
import { Cancellation } from '../../tools/context.ts';
import type { McpServerConfig } from './config.ts';
import { UndiciStreamableHttpTransport } from './http-transport.ts';
import { callToolOverHttp } from './http-call.ts';
import { CallHeaders } from './call-headers.ts';
import { ANY_RESULT, checkCallToolResult } from './call-result.ts';
import { liveChildren, StdioTransport, trackChild } from './stdio-transport.ts';
import { callStateless, StatelessUpstream } from './stateless.ts';
import { EndSignal } from './end-signal.ts';
import { callToolAsTask } from './task-call.ts';
import { UpstreamRelay, type Relayed } from './relay.ts';
import { ToolDefinitionError, UpstreamDown } from '../../errors.ts';
import { InputRequired, ToolFailure } from '../../tools/failure.ts';

export const FIRST_RESTART_DELAY_MS = 1000;
export const MAX_RESTART_DELAY_MS = 60_000;
const CONNECT_TIMEOUT_MS = 30_000;
const MAX_TOOL_PAGES = 100;

/** What the source is told of its server. */
export interface UpstreamListener {
  /** The tools, at each connection and whenever a list (tools, resources, prompts) changed; the rest is read through `client`. */
  listed(tools: Tool[], from: Client | StatelessUpstream): Promise<void>;
  /** A resource subscribed to changed (the server's own URI). */
  updated(uri: string): void;
}

export interface UpstreamCallOptions {
  /** The call's end (deadline or cancellation): the server is sent notifications/cancelled when it comes. */
  end: Cancellation | AbortSignal;
  /** Epoch ms: the call's deadline (the request timeout is set a little after it; the signal fires first). */
  deadline: number;
  /** Told of the server's progress reports and log messages, and asked its questions (the call's context). */
  progress: Relayed;
  /** Headers of this call only (the calling user's credentials), for a server over HTTP. */
  headers?: Record<string, string>;
}

export class McpUpstream {
  readonly #config: McpServerConfig;
  readonly #log: Logger;
  readonly #clientInfo: { name: string; version: string };
  readonly #listener: UpstreamListener;
  readonly #http: Dispatcher | null;
  /** The connection being made or in use; replaced on each (re)connection. */
  #client: Client | null = null;
  /** A 2026-07-28 server spoken to statelessly (it answered `server/discover`); null: the handshake era. */
  #stateless: StatelessUpstream | null = null;
  #pid: number | null = null;
  #state: 'starting' | 'up' | 'down' | 'closed' = 'starting';
  #downReason: string | null = null;
  #delayMs = FIRST_RESTART_DELAY_MS;
  #upSince = 0;
  #restartTimer: NodeJS.Timeout | null = null;
  /** While down: when the next start (or connection) is tried, epoch ms. */
  #nextAttemptAt = 0;
  #refreshing: Promise<void> = Promise.resolve();
  /**
   * Progress listeners by our own progressToken. The SDK's `onprogress` loses a server's last
   * report when the result arrives in the same read (it drops the listener before the queued
   * notification runs); a token of our own outlives the response by a microtask.
   */
  readonly #progress = new Map<string, Relayed>();
  /** The server's questions and log messages, relayed to the call they belong to. */
  readonly #relay: UpstreamRelay;
  /** Each call's own headers, found by the HTTP transport through the call's progress token. */
  readonly #callHeaders = new CallHeaders();
  #calls = 0;
  /** Over HTTP: the connection's transport, for tools/call without the SDK's Protocol (http-call.ts). */
  #lean: UndiciStreamableHttpTransport | null = null;
  /** Tools the SDK Client must call itself: it checks their output schema, or they require tasks. */
  #viaClient = new Set<string>();
  /** Tools that require tasks, of a server that runs tools/call as tasks (task-call.ts). */
  #taskTools = new Set<string>();

  /** `http`: the connection pool for a server over HTTP. */
  constructor(config: McpServerConfig, log: Logger, version: string, listener: UpstreamListener, http: Dispatcher | null = null) {
    this.#config = config;
    this.#http = http;
    this.#log = log;
    this.#clientInfo = { name: 'toolport', version };
    this.#listener = listener;
    this.#relay = new UpstreamRelay(this.#progress, log, config.kind === 'stdio');
  }

  get up(): boolean {
    return this.#state === 'up';
  }

  /** Why the server is not up ('starting' before the first connection ends). */
  get downReason(): string | null {
    return this.#state === 'up' ? null : this.#state === 'starting' ? 'starting' : this.#downReason;
  }

  /** While down: the seconds until the next start (stdio) or connection (HTTP) is tried; else null. */
  get nextAttemptInS(): number | null {
    return this.#state === 'down' && this.#restartTimer !== null ? Math.max(0, Math.ceil((this.#nextAttemptAt - Date.now()) / 1000)) : null;
  }

  /** The child process of a stdio server, while it runs. */
  get pid(): number | null {
    return this.#pid;
  }

  /** The first connection; resolves once it is up or has failed (then it is retried in the background). */
  start(): Promise<void> {
    return this.#connect(true);
  }

  /** `first`: the connection at start, where a tool that cannot join the catalog stops the start. */
  async #connect(first = false): Promise<void> {
    this.#restartTimer = null;
    if (this.#state === 'closed') return;
    const config = this.#config;
    if (config.kind === 'http' && this.#http !== null) {
      const stateless = new StatelessUpstream(new URL(config.url), this.#http, config.headers);
      if (await stateless.discover()) return this.#connectStateless(stateless, first);
    }
    // Declared so that servers offer the tools that ask; a caller that cannot answer is refused per question (relay.ts).
    const client = new Client(this.#clientInfo, { capabilities: { sampling: {}, elicitation: { form: {}, url: {} } } });
    this.#client = client;
    client.onclose = () => this.#lost(client, 'the connection closed');
    client.onerror = (err) => this.#log.debug({ err: err.message }, 'MCP transport error');
    for (const changed of [ToolListChangedNotificationSchema, ResourceListChangedNotificationSchema, PromptListChangedNotificationSchema])
      client.setNotificationHandler(changed, () => this.refresh());
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => this.#listener.updated(params.uri));
    client.setNotificationHandler(ProgressNotificationSchema, ({ params }) =>
      this.#progress.get(String(params.progressToken))?.progress(params.progress, params.total),
    );
    this.#relay.install(client);
    try {
      const transport = this.#transport();
      await client.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      if (transport instanceof StdioTransport && transport.pid !== null) trackChild((this.#pid = transport.pid));
      const tools = await this.#listTools(client);
      if (this.#client !== client) return;
      await this.#listener.listed(tools, client);
      this.#lean = transport instanceof UndiciStreamableHttpTransport ? transport : null;
      this.#state = 'up';
      this.#downReason = null;
      this.#upSince = Date.now();
      this.#log.debug({ tools: tools.length, pid: this.#pid }, 'MCP server connected');
    } catch (err) {
      if (first && err instanceof ToolDefinitionError) {
        await this.close();
        throw err;
      }
      this.#lost(client, err instanceof Error ? err.message : String(err));
    }
  }

  #transport(): StdioTransport | UndiciStreamableHttpTransport {
    const config = this.#config;
    if (config.kind === 'http') {
      if (this.#http === null) throw new Error('no HTTP connection pool for an MCP server over HTTP');
      const transport = new UndiciStreamableHttpTransport(new URL(config.url), this.#http, config.headers, this.#callHeaders);
      transport.oncallmessage = (message, call) => this.#relay.onCallStream(message, call);
      return transport;
    }
    const transport = new StdioTransport({ command: config.command, args: [...config.args], env: config.env, ...(config.cwd !== null && { cwd: config.cwd }) });
    createInterface({ input: transport.stderr }).on('line', (line) => this.#log.debug({ stderr: line.slice(0, 2000) }, 'MCP server stderr'));
    return transport;
  }

  async #listTools(client: Client): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      const listed = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: CONNECT_TIMEOUT_MS });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (cursor === undefined) break;
    }
    this.#viaClient = new Set(tools.filter((tool) => tool.outputSchema !== undefined || tool.execution?.taskSupport === 'required').map((tool) => tool.name));
    const tasks = client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
    this.#taskTools = new Set(tasks ? tools.filter((tool) => tool.execution?.taskSupport === 'required').map((tool) => tool.name) : []);
    return tools;
  }

  /** A server that answered `server/discover`: its tools listed statelessly, its calls each a request of their own. */
  async #connectStateless(stateless: StatelessUpstream, first: boolean): Promise<void> {
    this.#stateless = stateless;
    try {
      const tools = await stateless.listTools(MAX_TOOL_PAGES, CONNECT_TIMEOUT_MS);
      if (this.#stateless !== stateless) return;
      await this.#listener.listed(tools, stateless);
      this.#state = 'up';
      this.#downReason = null;
      this.#upSince = Date.now();
      this.#log.debug({ tools: tools.length }, 'MCP server (2026-07-28, stateless) reached');
    } catch (err) {
      if (first && err instanceof ToolDefinitionError) {
        await this.close();
        throw err;
      }
      this.#lost(stateless, err instanceof Error ? err.message : String(err));
    }
  }

  /** Reads the tool list again (on list_changed, or when a pin was accepted); refreshes run one at a time. */
  refresh(): Promise<void> {
    const client = this.#client;
    const stateless = this.#stateless;
    if (stateless !== null) return (this.#refreshing = this.#refreshing.then(() => this.#connectStateless(stateless, false)));
    this.#refreshing = this.#refreshing.then(async () => {
      if (client === null || this.#client !== client || this.#state !== 'up') return;
      try {
        const tools = await this.#listTools(client);
        if (this.#client === client) await this.#listener.listed(tools, client);
      } catch (err) {
        this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'MCP tool list not refreshed');
      }
    });
    return this.#refreshing;
  }

  /** The connection `client` is gone or failed: the server is down until the restart after the backoff. */
  #lost(client: Client | StatelessUpstream, reason: string): void {
    if ((this.#client ?? this.#stateless) !== client || this.#state === 'closed') return;
    this.#client = null;
    this.#stateless = null;
    this.#lean = null;
    if (this.#pid !== null) liveChildren.delete(this.#pid);
    this.#pid = null;
    // A server that stayed up longer than the longest delay starts its backoff over.
    if (this.#state === 'up' && Date.now() - this.#upSince >= MAX_RESTART_DELAY_MS) this.#delayMs = FIRST_RESTART_DELAY_MS;
    this.#state = 'down';
    this.#downReason = reason.slice(0, 500);
    const delay = this.#delayMs;
    this.#delayMs = Math.min(this.#delayMs * 2, MAX_RESTART_DELAY_MS);
    this.#log.warn({ reason: this.#downReason, retryInMs: delay }, 'MCP server is down');
    if (client instanceof Client) {
      client.onclose = undefined;
      client.close().catch(() => {});
    }
    this.#nextAttemptAt = Date.now() + delay;
    this.#restartTimer = setTimeout(() => void this.#connect(), delay);
    this.#restartTimer.unref();
  }

  /** Forwards one tools/call; the call's end sends notifications/cancelled upstream. */
  async callTool(name: string, args: Record<string, unknown>, options: UpstreamCallOptions): Promise<CallToolResult> {
    // A stateless server's calls: no session to lose, its questions relayed to the caller (stateless.ts).
    if (this.#stateless !== null && this.#state === 'up') return callStateless(this.#stateless, name, args, options);
    const client = this.#client;
    if (client === null || this.#state !== 'up') throw new UpstreamDown(this.downReason ?? 'not connected');
    const progressToken = `toolport-${++this.#calls}`;
    this.#progress.set(progressToken, options.progress);
    if (options.headers !== undefined) this.#callHeaders.begin(progressToken, options.headers);
    const lean = this.#lean !== null && !this.#viaClient.has(name) ? this.#lean : null;
    const signal = lean !== null ? null : options.end instanceof Cancellation ? (new EndSignal(options.end) as unknown as AbortSignal) : options.end;
    try {
      const params = { name, arguments: args, _meta: { progressToken } };
      const result =
        signal === null
          ? await callToolOverHttp(lean!, progressToken, params, options.end)
          : this.#taskTools.has(name)
            ? await callToolAsTask(client, params, this.#relay, { signal, timeout: Math.max(1, options.deadline - Date.now()) + 1000 })
            : await client.callTool(params, ANY_RESULT, { signal, timeout: Math.max(1, options.deadline - Date.now()) + 1000 });
      const answer = checkCallToolResult(result);
      // The server failed after its caller could not answer its question: that is what the caller learns.
      const refused = answer.isError === true ? this.#relay.takeRefusal(progressToken) : undefined;
      if (refused !== undefined) throw refused;
      return answer;
    } catch (err) {
      const ended = options.end instanceof Cancellation ? options.end.reason : options.end.aborted ? (options.end.reason as unknown) : null;
      // The dispatcher has answered already (deadline or cancel), or the call waits for its caller's answer (relay.ts).
      if (ended !== null) throw ended instanceof InputRequired ? ended : err;
      if (err instanceof ToolFailure) throw err;
      if (err instanceof McpError && err.code !== ErrorCode.ConnectionClosed && err.code !== ErrorCode.RequestTimeout)
        throw this.#relay.takeRefusal(progressToken) ?? err;
      const reason = err instanceof Error ? err.message : String(err);
      // A broken HTTP connection does not close the client by itself: reconnect.
      if (this.#config.kind === 'http' && !(err instanceof McpError)) this.#lost(client, reason);
      throw new UpstreamDown(reason);
    } finally {
      this.#progress.delete(progressToken);
      this.#callHeaders.end(progressToken);
      this.#relay.takeRefusal(progressToken);
    }
  }

  /** Stops the server (a stdio child is ended, then killed) and any restart. */
  async close(): Promise<void> {
    this.#state = 'closed';
    if (this.#restartTimer !== null) clearTimeout(this.#restartTimer);
    const client = this.#client;
    this.#client = null;
    this.#lean = null;
    const pid = this.#pid;
    if (pid !== null) {
      liveChildren.delete(pid);
      try {
        process.kill(pid, 'SIGTERM'); // the SDK would first wait 2 s for the child to leave on its own
      } catch {
        // already gone
      }
    }
    if (client !== null) {
      client.onclose = undefined;
      await client.close().catch(() => {});
    }
  }
}
