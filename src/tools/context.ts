/**
 * The per-call context. Built on every call, so what most handlers never touch (the AbortSignal,
 * the child logger) is made on first use: EventTarget-based AbortControllers and pino children
 * are the costliest objects of a call.
 */
import type { Logger } from 'pino';
import type { InvocationResult } from './outcome.ts';
import type { ProgressListener } from './progress.ts';
import {
  askClient,
  elicitationParams,
  toolLog,
  type ClientChannel,
  type ElicitRequest,
  type ElicitResult,
  type SampleRequest,
  type SampleResult,
  type ToolLog,
} from './client-requests.ts';
import { ToolFailure } from './failure.ts';
import type { Credentials, NestedResult, Resources, SessionHandle, ToolContext, UserIdentity } from './types.ts';

/** Told once when a Cancellation fires. An object rather than a closure: one is made per call. */
export interface CancelListener {
  onCancelled(): void;
}

/**
 * Where a Cancellation's cause is watched (the caller's socket, a parent request). Watching costs
 * a listener, so it starts only when something listens: most calls answer before anything does.
 */
export interface CancelSource {
  watch(target: Cancellation): void;
}

/** Something that can end a call early: the caller going away, or a parent call ending. */
export class Cancellation {
  #listeners: CancelListener[] | null = [];
  #reason: Error | null = null;
  #source: CancelSource | null;

  constructor(source: CancelSource | null = null) {
    this.#source = source;
  }

  /** Why it fired; null while it has not (or while nothing watches its source: see watch()). */
  get reason(): Error | null {
    return this.#reason;
  }

  /** Starts watching the source (once); subscribe() does this itself. */
  watch(): void {
    const source = this.#source;
    if (source === null) return;
    this.#source = null;
    source.watch(this);
  }

  /** Tells `listener` once when cancelled (at once if already). */
  subscribe(listener: CancelListener): void {
    this.watch();
    if (this.#listeners === null) listener.onCancelled();
    else this.#listeners.push(listener);
  }

  unsubscribe(listener: CancelListener): void {
    const i = this.#listeners?.indexOf(listener) ?? -1;
    if (i >= 0) this.#listeners!.splice(i, 1);
  }

  cancel(reason: Error): void {
    if (this.#listeners === null) return;
    const listeners = this.#listeners;
    this.#listeners = null;
    this.#source = null;
    this.#reason = reason;
    for (const listener of listeners) listener.onCancelled();
  }
}

/** Where a program's inner call is recorded (docs/code-mode.md): its program's hash and its place among the program's calls. */
export interface RunKey {
  /** The program's hash. */
  run: string;
  /** The call's index among the program's calls, from 0. */
  index: number;
  /** How long the success is kept for a run again (code_replay_s). */
  ttlS: number;
}

/** Runs a handler's nested `context.invoke` (the dispatcher); an object, not a closure per call. */
export interface NestedCalls<Scope> {
  nested(name: string, params: Record<string, unknown>, parent: CallContext, scope: Scope): Promise<NestedResult>;
  /** The same call answered whole (approval, authorization…), and recorded under `runKey` when given. */
  nestedCall(name: string, params: Record<string, unknown>, parent: CallContext, scope: Scope, runKey?: RunKey): Promise<InvocationResult>;
}

export interface CallContextInit<Scope = unknown> {
  callId: string;
  toolName: string;
  requestId: string;
  /** The effect ledger's key of the call (the tool has an idempotency strategy), else null: the context's `idempotencyKey`. */
  ledgerKey: string | null;
  session: SessionHandle | null;
  /** Named in the call's log lines. */
  sessionId: string | null;
  deadline: number;
  caller: string | null;
  user: UserIdentity | null;
  resources: Resources;
  log: Logger;
  calls: NestedCalls<Scope>;
  /** Handed back to `calls.nested` with each nested call. */
  scope: Scope;
  /** What the call's caller may call (its key, its toolset); absent = every tool. */
  allows?: (toolName: string) => boolean;
  /** Absent or null: progress goes nowhere (no client asked for it). */
  progress?: ProgressListener | null;
  /** The calling user's credentials; absent: none are configured. */
  credentials?: Credentials;
  /** The caller's MCP client (log messages, elicitation, sampling); absent: none. */
  client?: ClientChannel | null;
  /** Answers to what an earlier run of this call asked (a task resumed, an MCP retry). */
  inputResponses?: Readonly<Record<string, unknown>>;
  /** The call runs as a task: its questions hold it in `input_required`. */
  inTask?: boolean;
}

/** `context.credentials` when TOOLS_FILE declares no credentials. */
export const NO_CREDENTIALS: Credentials = {
  get(name: string): Promise<string> {
    return Promise.reject(
      new ToolFailure(
        'handler_error',
        `The tool asked for the credential "${name}", which is not declared in this service's configuration.`,
        `credential "${name}" is not declared`,
      ),
    );
  },
};

export class CallContext implements ToolContext {
  readonly callId: string;
  readonly toolName: string;
  readonly requestId: string;
  readonly idempotencyKey: string | null;
  readonly session: SessionHandle | null;
  readonly deadline: number;
  readonly caller: string | null;
  readonly user: UserIdentity | null;
  readonly resources: Resources;
  readonly credentials: Credentials;
  /** Ends this call (deadline or cancellation); nested calls listen to it. */
  readonly ended = new Cancellation();
  readonly #init: CallContextInit<unknown>;
  #controller: AbortController | null = null;
  #log: ToolLog | null = null;
  /** How many questions the handler has asked the client (each keyed by its number). */
  #asked = 0;
  /** performance.now() of the last beat(); 0: none yet. */
  #beatAt = 0;

  constructor(init: CallContextInit<unknown>) {
    this.callId = init.callId;
    this.toolName = init.toolName;
    this.requestId = init.requestId;
    this.idempotencyKey = init.ledgerKey;
    this.session = init.session;
    this.deadline = init.deadline;
    this.caller = init.caller;
    this.user = init.user;
    this.resources = init.resources;
    this.credentials = init.credentials ?? NO_CREDENTIALS;
    this.#init = init;
    Object.freeze(this);
  }

  get signal(): AbortSignal {
    if (this.#controller === null) {
      this.#controller = new AbortController();
      const controller = this.#controller;
      this.ended.subscribe({ onCancelled: () => controller.abort(this.ended.reason) });
    }
    return this.#controller.signal;
  }

  get log(): ToolLog {
    const init = this.#init;
    this.#log ??= toolLog(
      init.log.child(
        init.sessionId === null ? { callId: init.callId, tool: init.toolName } : { callId: init.callId, tool: init.toolName, session: init.sessionId },
      ),
      init.client ?? null,
      init.toolName,
    );
    return this.#log;
  }

  elicit(request: ElicitRequest): Promise<ElicitResult> {
    return this.#ask('elicitation/create', elicitationParams(request)) as Promise<ElicitResult>;
  }

  sample(request: SampleRequest): Promise<SampleResult> {
    return this.#ask('sampling/createMessage', { ...request }) as Promise<SampleResult>;
  }

  #ask(method: 'elicitation/create' | 'sampling/createMessage', params: Record<string, unknown>): Promise<unknown> {
    const init = this.#init;
    const call = { client: init.client ?? null, answers: init.inputResponses, inTask: init.inTask === true, tool: init.toolName };
    return askClient(call, ++this.#asked, method, params);
  }

  /** A handler's sign of life: a tool with `heartbeat_ms` that goes longer without one is aborted as stuck. */
  beat(): void {
    this.#beatAt = performance.now();
  }

  /** performance.now() of the last beat(); 0 when the handler has not beaten. */
  get lastBeat(): number {
    return this.#beatAt;
  }

  progress(done: number, total?: number): void {
    this.#init.progress?.(this.callId, done, total);
  }

  /** Whether this call's caller may call `name` (tool search shows nothing else). */
  mayCall(name: string): boolean {
    return this.#init.allows === undefined || this.#init.allows(name);
  }

  invoke(name: string, params: Record<string, unknown>): Promise<NestedResult> {
    return this.#init.calls.nested(name, params, this, this.#init.scope);
  }

  /** A nested call answered whole, for built-ins that pass an inner outcome on (code mode's programs). */
  invokeWhole(name: string, params: Record<string, unknown>, runKey?: RunKey): Promise<InvocationResult> {
    return this.#init.calls.nestedCall(name, params, this, this.#init.scope, runKey);
  }
}

/**
 * Where a handler that forwards its call learns that the call ended (deadline, cancellation): the
 * call's own Cancellation when the pipeline made the context, so no AbortSignal is made per call;
 * any other context's signal.
 */
export function callEnd(context: ToolContext): Cancellation | AbortSignal {
  return context instanceof CallContext ? context.ended : context.signal;
}
