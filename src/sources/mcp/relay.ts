/**
 * What an upstream MCP server asks and tells during a forwarded tools/call, relayed to the caller
 * of that call (docs/mcp-sources.md, "Questions and log messages of the server"): `sampling/createMessage` and
 * `elicitation/create` are asked through the call's context (context.sample, context.elicit: live
 * inside an MCP client's answer stream, by `input_required`, or not at all) and
 * `notifications/message` goes to context.log. Progress goes by the call's progress token
 * (upstream.ts).
 *
 * Which call a message belongs to: over Streamable HTTP, the call whose POST stream carried it;
 * a question queued for a server's task (task-call.ts), the call that follows the task; otherwise,
 * over stdio, where the protocol does not say, the only call in flight. With several in flight, a
 * question is refused and a log line stays in toolport's own log: one caller's question never
 * reaches another caller.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  LoggingMessageNotificationSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CreateMessageResult,
  type ElicitResult,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from 'pino';
import { isObject } from '../../json.ts';
import { LOG_LEVELS, type LogLevel, type SampleRequest } from '../../tools/client-requests.ts';
import { CallContext } from '../../tools/context.ts';
import { InputRequired, ToolFailure } from '../../tools/failure.ts';
import type { ToolContext } from '../../tools/types.ts';

/** A forwarded call as the server's messages reach it: the call's context. */
export type Relayed = Pick<ToolContext, 'elicit' | 'sample' | 'log' | 'progress'>;

/** One question of the upstream (`{method, params}`), asked of toolport's caller; its answer. */
export async function askCaller(asker: Pick<Relayed, 'elicit' | 'sample'>, request: unknown): Promise<unknown> {
  const { method, params } = isObject(request) ? request : {};
  const given = isObject(params) ? params : {};
  const message = typeof given.message === 'string' ? given.message : '';
  if (method === 'elicitation/create')
    return asker.elicit(
      typeof given.url === 'string' ? { message, url: given.url } : { message, schema: isObject(given.requestedSchema) ? given.requestedSchema : {} },
    );
  if (method === 'sampling/createMessage') return asker.sample(given as unknown as SampleRequest);
  throw new McpError(ErrorCode.MethodNotFound, `the server asked ${String(method).slice(0, 100)}, which toolport does not relay`);
}

const QUESTIONS = new Set(['sampling/createMessage', 'elicitation/create']);
/** Questions waiting for their handler at most; far more than calls can have open at once. */
const MAX_OPEN_QUESTIONS = 1000;

export class UpstreamRelay {
  /** The calls in flight, by progress token (upstream.ts keeps them). */
  readonly #calls: ReadonlyMap<string, Relayed>;
  readonly #log: Logger;
  /** Over stdio: a message belongs to the only call in flight. */
  readonly #sharedStream: boolean;
  /** Questions that came on a call's own stream: the server's request id → the call's token. */
  readonly #onStream = new Map<RequestId, string>();
  /** Tasks of the server that calls follow (task-call.ts): its task id → the call's token. */
  readonly #tasks = new Map<string, string>();
  /** Calls whose question the caller could not answer: the failure they end with if the server then fails. */
  readonly #refused = new Map<string, ToolFailure>();

  constructor(calls: ReadonlyMap<string, Relayed>, log: Logger, sharedStream: boolean) {
    this.#calls = calls;
    this.#log = log;
    this.#sharedStream = sharedStream;
  }

  /** Answers the server's questions and hears its log messages on `client`, which declared sampling and elicitation. */
  install(client: Client): void {
    client.setRequestHandler(CreateMessageRequestSchema, (request, extra) => this.#ask(request, extra.requestId) as Promise<CreateMessageResult>);
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => this.#ask(request, extra.requestId) as Promise<ElicitResult>);
    client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => this.#logged(params, this.#onlyCall()));
  }

  /** A message on the stream of the call `token` (Streamable HTTP). True: handled here, not by the SDK Client. */
  onCallStream(message: JSONRPCMessage, token: string): boolean {
    if (!('method' in message)) return false;
    if (message.method === 'notifications/message') {
      this.#logged(message.params, token);
      return true;
    }
    if (!('id' in message) || !QUESTIONS.has(message.method)) return false;
    // A question the SDK Client refuses before it reaches #ask (bad params) leaves its entry: the oldest go.
    if (this.#onStream.size >= MAX_OPEN_QUESTIONS) this.#onStream.delete(this.#onStream.keys().next().value!);
    this.#onStream.set(message.id, token);
    return false;
  }

  /** The call `token` follows the server's task `taskId`: the questions queued for that task are its own. */
  follow(taskId: string, token: string): void {
    this.#tasks.set(taskId, token);
  }

  unfollow(taskId: string): void {
    this.#tasks.delete(taskId);
  }

  /** Takes the failure a call ends with when its server failed after the caller could not answer its question. */
  takeRefusal(token: string): ToolFailure | undefined {
    if (this.#refused.size === 0) return undefined;
    const failure = this.#refused.get(token);
    this.#refused.delete(token);
    return failure;
  }

  #onlyCall(): string | undefined {
    if (!this.#sharedStream || this.#calls.size !== 1) return undefined;
    return this.#calls.keys().next().value;
  }

  /** The call following the task a question names (`_meta["io.modelcontextprotocol/related-task"]`). */
  #ofTask(params: unknown): string | undefined {
    if (this.#tasks.size === 0 || !isObject(params) || !isObject(params._meta)) return undefined;
    const related = params._meta[RELATED_TASK_META_KEY];
    return isObject(related) && typeof related.taskId === 'string' ? this.#tasks.get(related.taskId) : undefined;
  }

  async #ask(request: { method: string; params?: unknown }, requestId: RequestId): Promise<unknown> {
    const token = this.#onStream.get(requestId) ?? this.#ofTask(request.params) ?? this.#onlyCall();
    this.#onStream.delete(requestId);
    const call = token === undefined ? undefined : this.#calls.get(token);
    if (call === undefined) {
      this.#log.warn({ method: request.method }, 'MCP server asked outside any one call: refused');
      throw new McpError(ErrorCode.InvalidRequest, 'toolport relays a request only to the caller of the tools/call it belongs to, and cannot tell which');
    }
    try {
      return await askCaller(call, request);
    } catch (err) {
      if (err instanceof McpError) throw err;
      // The caller answers by calling again (a task, a 2026-07-28 client): this call ends now, the server is told.
      if (err instanceof InputRequired) {
        if (call instanceof CallContext) call.ended.cancel(err);
        throw new McpError(ErrorCode.InternalError, 'the call ended: its caller answers by calling again');
      }
      if (!(err instanceof ToolFailure)) throw err;
      this.#refused.set(token!, err);
      const cannot = err.detail.startsWith('the caller cannot answer');
      throw new McpError(cannot ? ErrorCode.MethodNotFound : ErrorCode.InternalError, err.message);
    }
  }

  /** A `notifications/message` of the server: to the call's context.log (its caller and toolport's log), else toolport's log. */
  #logged(params: unknown, token: string | undefined): void {
    const given = isObject(params) ? params : {};
    const level = (LOG_LEVELS as readonly unknown[]).includes(given.level) ? (given.level as LogLevel) : 'info';
    const logger = typeof given.logger === 'string' ? given.logger.slice(0, 100) : 'server';
    const call = token === undefined ? undefined : this.#calls.get(token);
    if (call === undefined) {
      this.#log.debug({ clientLevel: level, logger, data: given.data }, 'MCP server log message');
      return;
    }
    if (typeof given.data === 'string') call.log(level, given.data);
    else call.log(level, logger, given.data);
  }
}
