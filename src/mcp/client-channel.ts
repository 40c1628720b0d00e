/**
 * The caller's MCP client as a handler reaches it (src/tools/client-requests.ts). In the handshake
 * era a client that reads the call's SSE answer is told log messages at the level its session set
 * (`logging/setLevel`, kept in the store), and asked `elicitation/create` or
 * `sampling/createMessage` inside that answer when it declared the capability at initialize; its
 * answer arrives in a POST of its own, on any replica (handed over through the store). A
 * 2026-07-28 client that declares the capability in the request is asked by `input_required`
 * (src/mcp/input-state.ts). Anyone else cannot answer.
 */
import { createHash, randomUUID } from 'node:crypto';
import { isObject } from '../json.ts';
import type { McpClientStore } from '../store/mcp-clients.ts';
import type { Cancellation } from '../tools/context.ts';
import { LOG_LEVELS, type ClientChannel, type ClientMethod, type LogLevel } from '../tools/client-requests.ts';
import { ToolFailure } from '../tools/failure.ts';
import { declaresElicitation, type ClientCapabilities } from './client-capabilities.ts';
import type { Era } from './era.ts';
import { META, metaOf, type JsonRpcClientResponse, type JsonRpcRequest } from './protocol.ts';

/** How often a waiting call looks for an answer that landed on another replica. */
const POLL_MS = 250;
/** How long a call waits for its client's answer. */
const WAIT_MS = 10 * 60_000;
const ID_PREFIX = 'toolport-ask-';
/** The level a session's client hears when it never set one. */
const DEFAULT_LEVEL: LogLevel = 'info';

function hashed(...parts: (string | null)[]): string {
  return createHash('sha256').update(parts.join('\n')).digest('base64url');
}

/** What clients asked and answered, and the log levels sessions set: per replica, and in the store for the others. */
export class ClientAnswers {
  readonly #store: McpClientStore;
  readonly #ttlMs: number;
  readonly #waiting = new Map<string, (response: JsonRpcClientResponse) => void>();

  constructor(store: McpClientStore, sessionTtlMs: number) {
    this.#store = store;
    this.#ttlMs = sessionTtlMs;
  }

  /** `logging/setLevel` of a session (handshake era). */
  async setLevel(caller: string | null, session: string, level: LogLevel): Promise<void> {
    if (session !== '') await this.#store.remember(`log:${hashed(caller, session)}`, JSON.stringify(level), this.#ttlMs);
  }

  async level(caller: string | null, session: string): Promise<LogLevel> {
    if (session === '') return DEFAULT_LEVEL;
    const json = await this.#store.recall(`log:${hashed(caller, session)}`).catch(() => null);
    return json === null ? DEFAULT_LEVEL : (JSON.parse(json) as LogLevel);
  }

  /** A client's answer to a question of ours: woken here, or handed to the replica that waits. False: not ours. */
  async answered(response: JsonRpcClientResponse, caller: string | null): Promise<boolean> {
    if (typeof response.id !== 'string' || !response.id.startsWith(ID_PREFIX)) return false;
    const wake = this.#waiting.get(`${caller ?? ''}\n${response.id}`);
    if (wake !== undefined) wake(response);
    else await this.#store.remember(`answer:${hashed(caller, response.id)}`, JSON.stringify(response), WAIT_MS);
    return true;
  }

  /** Sends the question with `send` and waits for the answer; null once `gone()` or after WAIT_MS. */
  async ask(caller: string | null, request: Omit<JsonRpcRequest, 'id'>, send: (request: JsonRpcRequest) => void, gone: () => boolean) {
    const id = `${ID_PREFIX}${randomUUID()}`;
    const local = `${caller ?? ''}\n${id}`;
    let answer: JsonRpcClientResponse | null = null;
    let wake: () => void = () => undefined;
    this.#waiting.set(local, (response) => {
      answer = response;
      wake();
    });
    try {
      send({ ...request, id });
      const until = Date.now() + WAIT_MS;
      while (answer === null && !gone() && Date.now() < until) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, POLL_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (answer !== null) break;
        const json = await this.#store.recall(`answer:${hashed(caller, id)}`).catch(() => null);
        if (json !== null) answer = JSON.parse(json) as JsonRpcClientResponse;
      }
      return answer as JsonRpcClientResponse | null;
    } finally {
      this.#waiting.delete(local);
    }
  }
}

/** Whether `capabilities` let the client answer `method` with these params. */
function declares(capabilities: unknown, method: ClientMethod, params: Record<string, unknown>): boolean {
  if (method === 'sampling/createMessage') return isObject(capabilities) && isObject(capabilities.sampling);
  return declaresElicitation(capabilities, params.mode === 'url' ? 'url' : 'form');
}

export interface ChannelRequest {
  era: Era;
  message: JsonRpcRequest;
  sessionKey: string;
  caller: string | null;
  /** Sends a message within the call's SSE answer; absent when the client reads plain JSON. */
  send: ((message: JsonRpcRequest | Record<string, unknown>) => void) | undefined;
  /** Fires when the client goes away: a question waits no longer. */
  cancellation: Cancellation;
}

/** One MCP tools/call's channel to its client; made per call, costs nothing until a handler uses it. */
export class McpClientChannel implements ClientChannel {
  readonly #answers: ClientAnswers;
  readonly #capabilities: ClientCapabilities | null;
  readonly #request: ChannelRequest;
  #level: Promise<LogLevel> | null = null;
  /** Log messages still waiting for the session's level: the answer waits for them (null: none was sent). */
  #pending: Promise<void> | null = null;
  #closed = false;

  constructor(answers: ClientAnswers, capabilities: ClientCapabilities | null, request: ChannelRequest) {
    this.#answers = answers;
    this.#capabilities = capabilities;
    this.#request = request;
  }

  log(level: LogLevel, message: string, data: unknown, logger: string): void {
    const { send, era, sessionKey, caller } = this.#request;
    if (send === undefined || this.#closed) return;
    const declared = era === 'stateless' ? metaOf(this.#request.message.params)?.['io.modelcontextprotocol/logLevel'] : undefined;
    this.#level ??= typeof declared === 'string' ? Promise.resolve(declared as LogLevel) : this.#answers.level(caller, sessionKey);
    const params = { level, logger, data: data === undefined ? message : { message, data } };
    this.#pending = (this.#pending ?? Promise.resolve())
      .then(() => this.#level!)
      .then((threshold) => {
        if (!this.#closed && LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold)) send({ jsonrpc: '2.0', method: 'notifications/message', params });
      });
  }

  async reach(method: ClientMethod, params: Record<string, unknown>): Promise<'live' | 'resume' | 'none'> {
    const { era, message, send, caller, sessionKey } = this.#request;
    if (era === 'stateless') return declares(metaOf(message.params)?.[META.clientCapabilities], method, params) ? 'resume' : 'none';
    if (send === undefined || this.#capabilities === null) return 'none';
    const declared = await this.#capabilities.recall(caller, sessionKey).catch(() => null);
    return declared !== null && declares(declared.capabilities, method, params) ? 'live' : 'none';
  }

  async ask(method: ClientMethod, params: Record<string, unknown>): Promise<unknown> {
    const { caller, send } = this.#request;
    const { cancellation } = this.#request;
    cancellation.watch();
    const answer = await this.#answers.ask(caller, { jsonrpc: '2.0', method, params }, send!, () => this.#closed || cancellation.reason !== null);
    if (answer === null) throw new ToolFailure('input_unavailable', `The client did not answer ${method} in time.`, `no answer to ${method}`);
    if (answer.error !== undefined) {
      const detail = isObject(answer.error) && typeof answer.error.message === 'string' ? answer.error.message.slice(0, 200) : 'an error';
      throw new ToolFailure('input_unavailable', `The client refused ${method}: ${detail}`, `the client answered ${method} with an error`);
    }
    return answer.result;
  }

  /** Ends the channel: nothing is sent after. A promise of the log messages still on their way when there are any, else null. */
  close(): Promise<void> | null {
    const pending = this.#pending;
    if (pending === null) {
      this.#closed = true;
      return null;
    }
    return pending.catch(() => undefined).then(() => void (this.#closed = true));
  }
}
