/**
 * One call as it goes down the pipeline (./index.ts): what arrived, who calls, and what each stage
 * has established so far. One object per call, filled in by the stages in their order.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Principal } from '../../callers/principal.ts';
import { CallContext, type Cancellation, type NestedCalls, type RunKey } from '../context.ts';

export type { RunKey };
import type { CallIdentity, GuardrailAction } from '../outcome.ts';
import type { ProgressListener } from '../progress.ts';
import type { ClientChannel } from '../client-requests.ts';
import type { RegisteredTool } from '../registry.ts';
import type { SessionAnnouncement, SessionSource } from '../session-handle.ts';
import type { Credentials, Resources, SessionHandle, UserIdentity } from '../types.ts';

export interface ToolCall {
  id: string | null;
  name: string;
  /** An object, a JSON string (OpenAI, Responses), or absent. */
  arguments: unknown;
  /** The arguments are already a parsed body: a string is a wrong value, not JSON text. */
  parsed?: boolean;
  /** The caller's Idempotency-Key for this call (docs/ledger.md), already checked by the HTTP edge. */
  idempotencyKey?: string | null;
  /** A program's inner call (docs/code-mode.md): recorded in the ledger under its run, whatever the tool's own strategy. */
  runKey?: RunKey;
}

/** A toolset by name, as a request chose it: `search` when its listing is the search built-ins. */
export interface ToolsetRef {
  name: string;
  search: boolean;
}

/** Who calls: one identity, made once where the request was authenticated (or from a task's record of it). */
export interface CallerIdentity {
  /** The API key's id or the signed-in subject: the caller logs, records, metrics and ownership name; null when the service is open. */
  readonly id: string | null;
  /** As policies and approvals see the caller; null when no auth is configured (or a task's key is gone). */
  readonly principal: Principal | null;
  /** The verified user (`context.user`); null for an API key or an open service. */
  readonly user: UserIdentity | null;
  /** The bearer the request presented (an API key, a token), named: the redaction stage keeps it out of results. */
  readonly presented: { readonly name: string; readonly value: string } | null;
}

/** What the request may call and how: its format, its reach, its time limits and its cancellation. */
export interface CallOptions {
  readonly requestId: string;
  /** The request's format (native, openai, anthropic, mcp…), for traces. */
  readonly format: string;
  /** The caller's tool allowlist; a tool it refuses does not exist for this call. Absent = every tool. */
  readonly allows?: (toolName: string) => boolean;
  /** The toolset the request named (X-Toolset, ?toolset=, /mcp/{toolset}); a task keeps it, so its runs stay inside it. */
  readonly toolset?: ToolsetRef;
  /** The caller's X-Timeout-Ms, counted from `receivedAt` (epoch ms). */
  readonly timeoutMs: number | null;
  /** The limit of a tool that sets none, when not the pipeline's (a task's is TASK_TIMEOUT_MS). */
  readonly defaultTimeoutMs?: number;
  readonly receivedAt: number;
  /** Fires when the caller goes away (or, for a nested call, when its parent call ends). */
  readonly cancellation: Cancellation | null;
  readonly parentCallId?: string;
  readonly depth?: number;
  /** The task this call runs in, when it runs as one (docs/tasks.md). */
  readonly taskId?: string;
  /** What was answered to the task's input requests (`tasks/update`, or a resume with answers), keyed as they were. */
  readonly inputResponses?: Readonly<Record<string, unknown>>;
}

/** Where what the call does and says goes: its session, its progress reports, its client, its log. */
export interface CallSinks {
  readonly sessionId: string | null;
  /** Absent = 'header'. An MCP connection's session ('connection') gives way to a session built-in's `session_id` argument. */
  readonly sessionSource?: SessionSource;
  /** Where the handlers' `context.progress` reports go (an SSE or MCP stream); absent = nowhere. */
  readonly progress?: ProgressListener;
  /** The caller's MCP client, for the handlers' `context.log`, `elicit` and `sample`; absent = none. */
  readonly client?: ClientChannel;
  readonly log: Logger;
}

/**
 * The calls of one request, by concern: who calls, what and how, where it goes. Built once and never
 * changed: what differs for one call (a nested call, a session a built-in chose) is a new scope.
 */
export interface InvocationScope {
  readonly caller: CallerIdentity;
  readonly options: CallOptions;
  readonly sinks: CallSinks;
}

/** The identity of a service without authentication: nobody in particular. */
export const OPEN_CALLER: CallerIdentity = Object.freeze({ id: null, principal: null, user: null, presented: null });

/** Handed by the redaction stage to the handler stage: replaces the secrets toolport knows (docs/operations.md#secrets-never-reach-the-model). */
export interface Redaction {
  text(text: string): string;
  /** A copy of a JSON-like value with its strings redacted; the same value when nothing was found. */
  value<T>(value: T): T;
}

/** What a handler's context needs beyond the call: made once per pipeline, shared by its calls. */
export interface CallEnvironment {
  resources: Resources;
  /** Runs a handler's `context.invoke` through the same pipeline. */
  calls: NestedCalls<InvocationScope>;
}

/**
 * A call in the pipeline. The fields marked "set by" are written by that stage and read by the
 * stages after it; a stage before it must not read them.
 */
export class PipelineCall {
  /** The call as it arrived. */
  readonly call: ToolCall;
  /** The request's scope; the scope stage replaces it with a new one in the session a session built-in chose. */
  scope: InvocationScope;
  readonly identity: CallIdentity;
  /** Set by lookup. */
  tool!: RegisteredTool;
  /** The arguments once parsed as JSON (null before, or when they are not JSON): what the call's event and feed entry show. */
  parsed: unknown = null;
  /** Set by validate: the arguments, valid against the tool's schema, frozen. */
  params!: Readonly<Record<string, unknown>>;
  /** Set by the scope stage: epoch ms, and the time limit it comes from. */
  deadline = 0;
  budgetMs = 0;
  /** Set by the scope stage: a session built-in in a session the model did not name; its result tells the model the id. */
  announceSession: SessionAnnouncement = false;
  /** Set by the credentials stage: the caller's credentials (absent: the service declares none). */
  credentials: Credentials | undefined = undefined;
  /** Set by the credentials stage: the credential values handed to this call so far, by name. */
  heldCredentials: ReadonlyMap<string, string> | null = null;
  /** Set by the redaction stage: what the handler answers or throws goes through it first. */
  redaction: Redaction | null = null;
  /** Set by the ledger stage when it lets an idempotent call run: the call's ledger key. */
  ledgerKey: string | null = null;
  /** Set by the session stage for each attempt: the staged session the handler works on. */
  session: SessionHandle | null = null;
  /** Set by the guardrail input stage when a guardrail acted on the arguments (docs/guardrails.md). */
  guardrails: GuardrailAction[] | null = null;
  /** Set by the handler stage: the call reached its handler (an upstream's, for a forwarded tool). */
  ran = false;
  /** Set by the policy stage: the rule that decided the call (`policy[2]`, or `approval` for a tool's own). */
  rule: string | null = null;
  /** Set by the session stage once it has recorded the call's event in the session. */
  sessionRecorded = false;
  readonly #environment: CallEnvironment;

  constructor(call: ToolCall, scope: InvocationScope, environment: CallEnvironment) {
    this.call = call;
    this.scope = scope;
    this.identity = { id: call.id ?? `call_${randomUUID()}`, name: call.name, toolHash: null, startedAt: performance.now() };
    this.#environment = environment;
  }

  /** The handler's context, on `session` (null: none; a staged view for a custom key function). */
  context(session: SessionHandle | null): CallContext {
    const scope = this.scope;
    const { options, sinks } = scope;
    return new CallContext({
      callId: this.identity.id,
      toolName: this.tool.name,
      requestId: options.requestId,
      ledgerKey: this.ledgerKey,
      session,
      deadline: this.deadline,
      sessionId: sinks.sessionId,
      caller: scope.caller.id,
      user: scope.caller.user,
      resources: this.#environment.resources,
      log: sinks.log,
      calls: this.#environment.calls,
      scope,
      ...(options.allows !== undefined && { allows: options.allows }),
      progress: sinks.progress ?? null,
      ...(this.credentials !== undefined && { credentials: this.credentials }),
      ...(sinks.client !== undefined && { client: sinks.client }),
      ...(options.inputResponses !== undefined && { inputResponses: options.inputResponses }),
      ...(options.taskId !== undefined && { inTask: true }),
    });
  }
}
