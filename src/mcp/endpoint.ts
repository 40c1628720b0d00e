/**
 * The MCP methods toolport serves, over the same catalog and dispatcher as POST /tools/invoke.
 * Stateless: nothing is kept between requests except the calls in flight, so that a
 * `notifications/cancelled` posted beside a running `tools/call` can abort it.
 */
import { Cancellation, type CancelListener, type CancelSource } from '../tools/context.ts';
import type { Dispatcher, InvocationScope } from '../tools/invoke.ts';
import type { ProgressListener } from '../tools/progress.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Era } from './era.ts';
import {
  ErrorCode,
  HANDSHAKE_VERSIONS,
  META,
  ProtocolFault,
  SUPPORTED_VERSIONS,
  type JsonRpcClientResponse,
  type JsonRpcNotification,
  type JsonRpcRequest,
  type RequestId,
} from './protocol.ts';
import type { Caller } from '../callers/keys.ts';
import type { ToolsetView } from '../toolsets/index.ts';
import { renderMcpCallToolResult, renderMcpTool } from '../formats/mcp.ts';
import { answered } from '../formats/answer.ts';
import { TASK_EXECUTION, TASK_METHODS, TASKS_CAPABILITY, type McpTasks } from './tasks.ts';
import { declaresTasks, EXTENSION_METHODS, TASKS_EXTENSION } from './tasks-extension.ts';
import type { ResultResources } from '../store/results.ts';
import type { Logger } from 'pino';
import { CACHE_HINTS, ENTRY_METHODS, McpCatalog } from './entries.ts';
import { McpClientChannel, type ClientAnswers } from './client-channel.ts';
import { answersOf, inputRequired } from './input-state.ts';
import { LOG_LEVELS, type LogLevel } from '../tools/client-requests.ts';
import type { McpSubscriptions } from './subscriptions.ts';
import { askToConnect } from './elicitation.ts';
import type { McpApprovals } from './approval.ts';
import type { McpClients } from './client-approval.ts';
import { isObject } from '../json.ts';

export interface RequestEnv {
  era: Era;
  /** Names the caller's calls in flight: the session id, or '' without one. */
  sessionKey: string;
  /** The API key's caller (null when the service is open): tools/list shows only its tools. */
  caller: Caller | null;
  /** `/mcp/{toolset}`: the toolset this endpoint serves (tools/list shows only its listing), or null. */
  toolset: ToolsetView | null;
  /** The call's scope (headers checked by the route); built only for tools/call. */
  scope(): InvocationScope;
  /** Set when the client sent a progressToken and can receive progress notifications. */
  progress?: ProgressListener;
  /** Set when the client reads an SSE answer: sends a request or notification to the client within it. */
  ask?: (request: JsonRpcRequest | Record<string, unknown>) => void;
  /** The HTTP request's id and logger (handed to resources and prompts). */
  requestId: string;
  log: Logger;
}

/** `resources`: the catalog's, and large results' whole, read by the URI of their resource_link (not listed). */
const CAPABILITIES = {
  tools: { listChanged: false },
  resources: { subscribe: true, listChanged: false },
  prompts: { listChanged: false },
  completions: {},
  logging: {},
};
/** 2026-07-28 with tasks: the tasks extension besides. */
const CAPABILITIES_WITH_TASKS = { ...CAPABILITIES, extensions: { [TASKS_EXTENSION]: {} } };

/** Links a call's own cancellation to the request's (the caller going away), once something listens. */
class CancelLink implements CancelListener, CancelSource {
  #child: Cancellation | null = null;
  constructor(readonly parent: Cancellation) {}

  watch(child: Cancellation): void {
    this.#child = child;
    this.parent.subscribe(this);
  }

  onCancelled(): void {
    this.#child?.cancel(this.parent.reason ?? new Error('the caller went away'));
  }

  detach(): void {
    if (this.#child !== null) this.parent.unsubscribe(this);
  }
}

export class McpEndpoint {
  readonly #dispatcher: Dispatcher;
  readonly #serverInfo: { name: string; version: string };
  readonly #registry: ToolRegistry;
  /** Resources, templates and prompts (and the stored results). */
  readonly #catalog: McpCatalog;
  /** What handlers ask clients, and the log levels sessions set; null: handlers reach no client. */
  readonly #answers: ClientAnswers | null;
  readonly #subscriptions: McpSubscriptions | null;
  /** Each era's tools/list result, built once per caller until the catalog changes. */
  readonly #toolLists = new Map<string, Record<Era, Record<string, unknown>>>();
  #listedVersion = -1;
  /** Calls in flight by session key and request id; ids repeat across clients, so a list. */
  readonly #inflight = new Map<string, Cancellation[]>();

  /** MAX_CONTENT_CHARS: where a tools/call answer's text is cut. */
  readonly #maxContentChars: number;

  /** MCP tasks (2025-11-25), served in the handshake era. */
  readonly #tasks: McpTasks | null;

  /** Approvals asked of the person at a 2026-07-28 client (input_required); null: the error text names them. */
  readonly #approvals: McpApprovals | null;

  /** What handshake-era clients declared at initialize, per MCP session; null: not remembered. */
  readonly #clients: McpClients | null;

  constructor(
    dispatcher: Dispatcher,
    registry: ToolRegistry,
    version: string,
    maxContentChars: number,
    tasks: McpTasks | null = null,
    results: Pick<ResultResources, 'read'> | null = null,
    approvals: McpApprovals | null = null,
    clients: McpClients | null = null,
    answers: ClientAnswers | null = null,
    subscriptions: McpSubscriptions | null = null,
  ) {
    this.#approvals = approvals;
    this.#clients = clients;
    this.#catalog = new McpCatalog(registry.entries, results);
    this.#answers = answers;
    this.#subscriptions = subscriptions;
    this.#dispatcher = dispatcher;
    this.#serverInfo = { name: 'toolport', version };
    this.#registry = registry;
    this.#tasks = tasks;
    this.#maxContentChars = maxContentChars;
  }

  #toolList(era: Era, caller: Caller | null, toolset: ToolsetView | null): Record<string, unknown> {
    const id = `${caller?.catalogKey ?? ''}\n${toolset === null ? '' : `${toolset.definition.name}${toolset.search ? '?search' : ''}`}`;
    if (this.#listedVersion !== this.#registry.version) {
      this.#toolLists.clear();
      this.#listedVersion = this.#registry.version;
    }
    let lists = this.#toolLists.get(id);
    if (lists === undefined) {
      const tools = this.#registry
        .list()
        .filter((tool) => (caller === null || caller.allows(tool.name)) && (toolset === null || toolset.listed(tool.name)))
        .map(renderMcpTool);
      const handshakeTools = this.#tasks === null ? tools : tools.map((tool) => ({ ...tool, execution: TASK_EXECUTION }));
      lists = { handshake: { tools: handshakeTools }, stateless: { resultType: 'complete', tools, ...CACHE_HINTS } };
      this.#toolLists.set(id, lists);
    }
    return lists[era];
  }

  /** The result of one request; a ProtocolFault thrown here is answered in-band (HTTP 200). */
  async request(message: JsonRpcRequest, env: RequestEnv): Promise<Record<string, unknown>> {
    if (this.#tasks !== null && env.era === 'handshake' && TASK_METHODS.has(message.method)) return this.#tasks.request(message, env.caller);
    if (this.#tasks !== null && env.era === 'stateless' && EXTENSION_METHODS.has(message.method)) return this.#tasks.extension.request(message, env.caller);
    if (ENTRY_METHODS.has(message.method)) return this.#catalog.request(message, env);
    switch (message.method) {
      case 'logging/setLevel':
        return this.#setLevel(message.params, env);
      case 'resources/subscribe':
      case 'resources/unsubscribe':
        return this.#subscribe(message, env);
      case 'tools/call':
        return this.#callTool(message, env);
      case 'tools/list':
        return this.#toolList(env.era, env.caller, env.toolset);
      case 'initialize':
        if (env.era === 'stateless') break;
        return this.#initialize(message.params, env);
      case 'ping':
        if (env.era === 'stateless') break;
        return {};
      case 'server/discover':
        return {
          ...(env.era === 'stateless' && { resultType: 'complete' }),
          supportedVersions: SUPPORTED_VERSIONS,
          capabilities: env.era === 'stateless' && this.#tasks !== null ? CAPABILITIES_WITH_TASKS : CAPABILITIES,
          ...CACHE_HINTS,
          _meta: { [META.serverInfo]: this.#serverInfo },
        };
    }
    throw new ProtocolFault(ErrorCode.MethodNotFound, `method not found: ${message.method.slice(0, 100)}`);
  }

  notification(message: JsonRpcNotification, sessionKey: string): void {
    if (message.method !== 'notifications/cancelled') return; // initialized, progress, …: nothing to do
    const requestId = message.params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const calls = this.#inflight.get(keyOf(sessionKey, requestId));
    // Without a session, two clients may use the same id: cancel only when the id is unambiguous.
    if (calls?.length === 1) calls[0]!.cancel(new Error('cancelled by the client'));
  }

  /** A client's answer to a request of ours (the approval form); anything else is dropped. */
  async response(message: JsonRpcClientResponse, caller: Caller | null): Promise<void> {
    if (await this.#answers?.answered(message, caller?.id ?? null)) return;
    await this.#clients?.approvals?.answered(message, caller?.id ?? null);
  }

  async #initialize(params: Record<string, unknown> | undefined, env: RequestEnv): Promise<Record<string, unknown>> {
    const requested = params?.protocolVersion;
    if (typeof requested !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, 'initialize needs params.protocolVersion');
    const known = (HANDSHAKE_VERSIONS as readonly string[]).includes(requested);
    const protocolVersion = known ? requested : HANDSHAKE_VERSIONS[0];
    if (this.#clients !== null && isObject(params?.capabilities)) {
      const declared = { protocolVersion, capabilities: params!.capabilities as Record<string, unknown> };
      // Not remembered while the store is down: the session's client is then asked nothing mid-call.
      await this.#clients.capabilities.remember(env.caller?.id ?? null, env.sessionKey, declared).catch(() => undefined);
    }
    return {
      protocolVersion,
      capabilities: this.#tasks === null ? CAPABILITIES : { ...CAPABILITIES, tasks: TASKS_CAPABILITY },
      serverInfo: this.#serverInfo,
    };
  }

  async #setLevel(params: Record<string, unknown> | undefined, env: RequestEnv): Promise<Record<string, unknown>> {
    const level = params?.level;
    if (typeof level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(level))
      throw new ProtocolFault(ErrorCode.InvalidParams, `logging/setLevel needs params.level, one of ${LOG_LEVELS.join(', ')}`);
    await this.#answers?.setLevel(env.caller?.id ?? null, env.sessionKey, level as LogLevel);
    return env.era === 'stateless' ? { resultType: 'complete' } : {};
  }

  async #subscribe(message: JsonRpcRequest, env: RequestEnv): Promise<Record<string, unknown>> {
    const uri = message.params?.uri;
    if (typeof uri !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, `${message.method} needs params.uri (a string)`);
    const filter =
      env.caller === null && env.toolset === null
        ? null
        : { allows: (name: string) => (env.caller?.allows(name) ?? true) && (env.toolset?.allows(name) ?? true) };
    if (this.#catalog.resolve(uri, filter) === null)
      throw new ProtocolFault(env.era === 'stateless' ? ErrorCode.InvalidParams : -32002, 'Resource not found', 400, { uri: uri.slice(0, 200) });
    if (this.#subscriptions !== null && env.sessionKey !== '')
      await this.#subscriptions.change(env.caller?.id ?? null, env.sessionKey, uri, message.method === 'resources/subscribe');
    return env.era === 'stateless' ? { resultType: 'complete' } : {};
  }

  async #callTool(message: JsonRpcRequest, env: RequestEnv): Promise<Record<string, unknown>> {
    const name = message.params?.name;
    if (typeof name !== 'string') throw new ProtocolFault(ErrorCode.InvalidParams, 'tools/call needs params.name (a string)');
    const task = message.params?.task;
    if (this.#tasks !== null && env.era === 'handshake' && typeof task === 'object' && task !== null)
      return this.#tasks.start(name, message.params!.arguments, env.scope());
    // 2026-07-28: the server decides; a client that declared the extension gets a task when the call is not quick.
    if (this.#tasks !== null && env.era === 'stateless' && declaresTasks(message.params))
      return this.#tasks.extension.call(name, message.params!.arguments, env.scope());
    // The calls of a batch share the request's scope; each gets its own cancellation, progress
    // listener and client channel, in a scope of its own made below.
    const shared = env.scope();
    const caller = shared.caller.id;
    const link = shared.options.cancellation === null ? null : new CancelLink(shared.options.cancellation);
    const cancellation = new Cancellation(link);
    const channel =
      this.#answers === null
        ? null
        : new McpClientChannel(this.#answers, this.#clients?.capabilities ?? null, {
            era: env.era,
            message,
            sessionKey: env.sessionKey,
            caller,
            send: env.ask,
            cancellation,
          });
    const key = keyOf(env.sessionKey, message.id);
    const calls = this.#inflight.get(key);
    if (calls === undefined) this.#inflight.set(key, [cancellation]);
    else calls.push(cancellation);
    try {
      // An argument that is not an object is a wrong value (invalid_arguments), never JSON text to parse.
      const args = message.params!.arguments;
      let answers: Readonly<Record<string, unknown>> | undefined;
      if (this.#approvals !== null && env.era === 'stateless') {
        await this.#approvals.resume(message, name, caller);
        answers = await answersOf(this.#approvals, message, name, caller);
      }
      const scope: InvocationScope = {
        caller: shared.caller,
        options: { ...shared.options, cancellation, ...(answers !== undefined && { inputResponses: answers }) },
        sinks: { ...shared.sinks, ...(env.progress !== undefined && { progress: env.progress }), ...(channel !== null && { client: channel }) },
      };
      let result = await this.#dispatcher.invoke({ id: null, name, arguments: args ?? {}, parsed: true }, scope);
      const logging = channel?.close();
      if (logging) await logging;
      if (result.error?.code === 'input_required' && result.input_requests !== undefined && this.#approvals !== null && env.era === 'stateless')
        return await inputRequired(this.#approvals, message, result, caller, scope.options.inputResponses);
      const clientApprovals = this.#clients?.approvals;
      if (clientApprovals && result.approval !== undefined && env.era === 'handshake' && env.ask !== undefined) {
        const question = { sessionKey: env.sessionKey, caller, ask: env.ask, cancellation };
        // Decided while it waited: the same call again runs the approved call once, or reports the outcome (its time limit starts anew).
        if (await clientApprovals.ask(result, question))
          result = await this.#dispatcher.invoke(
            { id: null, name, arguments: args ?? {}, parsed: true },
            { ...scope, options: { ...scope.options, receivedAt: Date.now() } },
          );
      }
      if (result.authorization !== undefined) {
        const client = { era: env.era, sessionKey: env.sessionKey, caller };
        const asked = await askToConnect(message, { ...result, authorization: result.authorization }, client, this.#clients?.capabilities ?? null);
        if (asked !== null) return asked;
      }
      if (this.#approvals !== null && env.era === 'stateless') {
        const asked = await this.#approvals.ask(message, result, caller);
        if (asked !== null) return asked;
      }
      const rendered: Record<string, unknown> = { ...renderMcpCallToolResult(answered(result, this.#maxContentChars)) };
      return env.era === 'stateless' ? { resultType: 'complete', ...rendered } : rendered;
    } finally {
      link?.detach();
      void channel?.close();
      const list = this.#inflight.get(key)!;
      if (list.length === 1) this.#inflight.delete(key);
      else list.splice(list.indexOf(cancellation), 1);
    }
  }
}

function keyOf(sessionKey: string, id: RequestId): string {
  return `${sessionKey}\n${typeof id}:${id}`;
}
