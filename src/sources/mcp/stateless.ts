/**
 * An upstream MCP server of revision 2026-07-28 spoken to statelessly (docs/mcp-sources.md, "The
 * 2026-07-28 era"): `server/discover` instead of a handshake, then every request a POST of its own
 * carrying the `_meta` envelope and the MCP-Protocol-Version, Mcp-Method and Mcp-Name headers. No
 * session, no stream to keep open: each answer is read from its own response (JSON or SSE).
 */
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { checkCallToolResult } from './call-result.ts';
import type { Dispatcher } from 'undici';
import { isObject } from '../../json.ts';
import { UpstreamDown } from '../../errors.ts';
import { askCaller, type Relayed } from './relay.ts';
import { Cancellation } from '../../tools/context.ts';

export const STATELESS_VERSION = '2026-07-28';
const META_VERSION = 'io.modelcontextprotocol/protocolVersion';
const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const DISCOVER_TIMEOUT_MS = 10_000;
const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** What toolport declares in every request: it relays questions, and follows a call answered with a task. */
const CLIENT_CAPABILITIES = { elicitation: {}, sampling: {}, extensions: { [TASKS_EXTENSION]: {} } };
/** Bounds of the wait between two looks at a server's task, whatever pollIntervalMs it names. */
const MIN_POLL_MS = 20;
const MAX_POLL_MS = 1000;

/** A JSON-RPC error of the server's own, as an Error with its code. */
export class StatelessError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** The result of the last message of an SSE answer that carries `id`. */
function fromEventStream(text: string, id: number): unknown {
  let found: unknown;
  for (const line of text.split('\n')) {
    if (!line.startsWith('data:')) continue;
    try {
      const message = JSON.parse(line.slice(5)) as Record<string, unknown>;
      if (message.id === id) found = message;
    } catch {
      // not a JSON-RPC message
    }
  }
  return found;
}

export class StatelessUpstream {
  readonly #url: URL;
  readonly #http: Dispatcher;
  readonly #headers: Record<string, string>;
  #ids = 0;
  /** What `server/discover` answered: the server's capabilities. */
  capabilities: Record<string, unknown> = {};

  constructor(url: URL, http: Dispatcher, headers: Record<string, string>) {
    this.#url = url;
    this.#http = http;
    this.#headers = headers;
  }

  /** Whether the server speaks 2026-07-28 (it answers `server/discover` naming it); any failure: no. */
  async discover(): Promise<boolean> {
    try {
      const found = await this.request('server/discover', {}, { timeoutMs: DISCOVER_TIMEOUT_MS });
      const versions = found.supportedVersions;
      if (!Array.isArray(versions) || !versions.includes(STATELESS_VERSION)) return false;
      this.capabilities = isObject(found.capabilities) ? found.capabilities : {};
      return true;
    } catch {
      return false;
    }
  }

  /** The server's tools, every page. */
  async listTools(maxPages: number, timeoutMs: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: unknown;
    for (let page = 0; page < maxPages; page++) {
      const listed = await this.request('tools/list', typeof cursor === 'string' ? { cursor } : {}, { timeoutMs });
      if (Array.isArray(listed.tools)) tools.push(...(listed.tools as Tool[]));
      cursor = listed.nextCursor;
      if (typeof cursor !== 'string') break;
    }
    return tools;
  }

  /** One request; the result, or StatelessError (the server's JSON-RPC error), or UpstreamDown. */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: { timeoutMs: number; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Record<string, unknown>> {
    const id = ++this.#ids;
    const meta = { ...(isObject(params._meta) ? params._meta : {}), [META_VERSION]: STATELESS_VERSION, [META_CAPABILITIES]: CLIENT_CAPABILITIES };
    const name = method === 'tools/call' ? params.name : method === 'prompts/get' ? params.name : method === 'resources/read' ? params.uri : undefined;
    const headers: Record<string, string> = {
      ...this.#headers,
      ...options.headers,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': STATELESS_VERSION,
      'mcp-method': method,
      ...(typeof name === 'string' && { 'mcp-name': /^[\x20-\x7e]*$/.test(name) ? name : `=?base64?${Buffer.from(name).toString('base64')}?=` }),
    };
    let answer: Dispatcher.ResponseData;
    let text: string;
    try {
      answer = await this.#http.request({
        origin: this.#url.origin,
        path: `${this.#url.pathname}${this.#url.search}`,
        method: 'POST',
        headers,
        body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: meta } }),
        signal: options.signal ?? AbortSignal.timeout(options.timeoutMs),
      });
      text = await answer.body.text();
    } catch (err) {
      throw new UpstreamDown(err instanceof Error ? err.message : String(err));
    }
    const type = String(answer.headers['content-type'] ?? '');
    let message: unknown;
    try {
      message = type.startsWith('text/event-stream') ? fromEventStream(text, id) : JSON.parse(text);
    } catch {
      message = undefined;
    }
    if (!isObject(message)) throw new UpstreamDown(`HTTP ${answer.statusCode} without a JSON-RPC answer`);
    if (isObject(message.error)) throw new StatelessError(Number(message.error.code), String(message.error.message));
    if (!isObject(message.result)) throw new UpstreamDown('an answer without a result');
    return message.result;
  }
}

/** The most rounds of questions one call may take before it is given up. */
const MAX_ROUNDS = 10;

interface StatelessCallOptions {
  timeoutMs: number;
  headers?: Record<string, string>;
  asker: Relayed;
  /** The call's end (deadline, cancellation, a question answered by calling again): a task followed is cancelled. */
  end: Cancellation | AbortSignal;
}

function endOf(end: Cancellation | AbortSignal): unknown {
  return end instanceof Cancellation ? end.reason : end.aborted ? (end.reason as unknown) : null;
}

/**
 * A call the server answered with a task (the tasks extension of 2026-07-28), followed to its end
 * inside the forwarded call: `tasks/get` at the server's pace, its `inputRequests` asked of
 * toolport's caller and answered with `tasks/update`, its result or error taken inline. The task
 * id stays in toolport; a call that ends first sends `tasks/cancel`.
 */
async function followTask(upstream: StatelessUpstream, answer: Record<string, unknown>, options: StatelessCallOptions): Promise<Record<string, unknown>> {
  const taskId = answer.taskId;
  if (typeof taskId !== 'string') throw new StatelessError(-32603, 'the server answered with a task without a taskId');
  const answered = new Set<string>();
  let task = answer;
  let ended = false;
  try {
    for (;;) {
      if (task.status === 'completed') {
        ended = true;
        if (!isObject(task.result)) throw new StatelessError(-32603, "the server's task completed without a result");
        return task.result;
      }
      if (task.status === 'failed' || task.status === 'cancelled') {
        ended = true;
        const error = isObject(task.error) ? task.error : {};
        const said = typeof error.message === 'string' ? error.message : typeof task.statusMessage === 'string' ? task.statusMessage : '';
        throw new StatelessError(
          typeof error.code === 'number' ? error.code : -32603,
          `the server's task ended ${String(task.status)}${said === '' ? '' : `: ${said}`}`,
        );
      }
      const requests = task.status === 'input_required' && isObject(task.inputRequests) ? task.inputRequests : {};
      const responses: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(requests)) if (!answered.has(key)) responses[key] = await askCaller(options.asker, request);
      for (const key of Object.keys(responses)) answered.add(key);
      if (Object.keys(responses).length > 0) await upstream.request('tasks/update', { taskId, inputResponses: responses }, options);
      else {
        const pause = typeof task.pollIntervalMs === 'number' ? task.pollIntervalMs : MAX_POLL_MS;
        await new Promise((resolve) => setTimeout(resolve, Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, pause))));
      }
      const reason = endOf(options.end);
      if (reason !== null) throw reason;
      task = await upstream.request('tasks/get', { taskId }, options);
    }
  } finally {
    if (!ended)
      upstream
        .request('tasks/cancel', { taskId }, { timeoutMs: MAX_POLL_MS * 5, ...(options.headers !== undefined && { headers: options.headers }) })
        .catch(() => {});
  }
}

/**
 * tools/call statelessly. An `input_required` answer's questions are asked of toolport's caller
 * (context.elicit, context.sample: the caller sees toolport's own sealed state, never the
 * server's), and the call is retried with the answers and the server's `requestState`.
 */
export async function callStatelessTool(
  upstream: StatelessUpstream,
  name: string,
  args: Record<string, unknown>,
  options: StatelessCallOptions,
): Promise<Record<string, unknown>> {
  let params: Record<string, unknown> = { name, arguments: args };
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const result = await upstream.request('tools/call', params, options);
    if (result.resultType === 'task') return followTask(upstream, result, options);
    if (result.resultType !== 'input_required') return result;
    const requests = isObject(result.inputRequests) ? result.inputRequests : {};
    const responses: Record<string, unknown> = {};
    for (const [key, request] of Object.entries(requests)) responses[key] = await askCaller(options.asker, request);
    params = { name, arguments: args, inputResponses: responses, ...(result.requestState !== undefined && { requestState: result.requestState }) };
  }
  throw new StatelessError(-32603, `the server kept asking after ${MAX_ROUNDS} rounds`);
}

/** tools/call of a stateless server as the handshake-era path answers it: a checked CallToolResult, the server's errors as McpError. */
export async function callStateless(
  upstream: StatelessUpstream,
  name: string,
  args: Record<string, unknown>,
  options: { deadline: number; headers?: Record<string, string>; progress: Relayed; end: Cancellation | AbortSignal },
): Promise<CallToolResult> {
  try {
    const timeoutMs = Math.max(1, options.deadline - Date.now()) + 1000;
    const result = await callStatelessTool(upstream, name, args, {
      timeoutMs,
      asker: options.progress,
      end: options.end,
      ...(options.headers !== undefined && { headers: options.headers }),
    });
    return checkCallToolResult(result);
  } catch (err) {
    throw err instanceof StatelessError ? new McpError(err.code, err.message) : err;
  }
}
