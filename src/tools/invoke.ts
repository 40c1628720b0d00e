/**
 * Dispatch (SPEC §3): lookup → parse arguments → validate → deadline → context → handler →
 * result check → content → ToolInvoked event. Every tool-level failure is a result, never a throw;
 * only a store that cannot be reached escapes, as StoreUnavailableError (503 at the HTTP edge).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { UNKNOWN_TOOL, type Metrics } from '../metrics.ts';
import { deepFreeze } from '../json.ts';
import { StoreUnavailableError } from '../store/types.ts';
import { explain, failure, invocationResult, reasonOf, type CallIdentity, type InvocationResult, type ResultParts } from './outcome.ts';
import type { ResultRef, ResultResources } from '../store/results.ts';
import { joinContent, withAttachmentsNamed } from './render.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import { CallContext, type Cancellation, type NestedCalls } from './context.ts';
import { settle } from './race.ts';
import { ToolFailure } from './failure.ts';
import { checkResult, parseArguments } from './result.ts';
import type { CallTracer, EffectGuard, SessionCall, SessionRun, SessionRunner } from './seams.ts';
import type { NestedResult, SessionHandle } from './types.ts';
import type { ProgressListener } from './progress.ts';
import { announceSession, chooseSession, type SessionSource } from './session-handle.ts';

export interface ToolCall {
  id: string | null;
  name: string;
  /** An object, a JSON string (OpenAI, Responses), or absent. */
  arguments: unknown;
  /** The arguments are already a parsed body: a string is a wrong value, not JSON text. */
  parsed?: boolean;
  /** The caller's Idempotency-Key for this call (SPEC §5), already checked by the HTTP edge. */
  idempotencyKey?: string | null;
}

/** Who calls and under which limits; shared by the calls of one request. */
export interface InvocationScope {
  requestId: string;
  sessionId: string | null;
  /** Absent = 'header'. An MCP connection's session ('connection') gives way to a session built-in's `session_id` argument. */
  sessionSource?: SessionSource;
  caller: string | null;
  /** The caller's tool allowlist; a tool it refuses does not exist for this call. Absent = every tool. */
  allows?: (toolName: string) => boolean;
  /** The caller's X-Timeout-Ms, counted from `receivedAt` (epoch ms). */
  timeoutMs: number | null;
  /** The limit of a tool that sets none, when not the dispatcher's (a task's is TASK_TIMEOUT_MS). */
  defaultTimeoutMs?: number;
  receivedAt: number;
  log: Logger;
  /** Fires when the caller goes away (or, for a nested call, when its parent call ends). */
  cancellation: Cancellation | null;
  parentCallId?: string;
  depth?: number;
  /** Where the handlers' `context.progress` reports go (an SSE or MCP stream); absent = nowhere. */
  progress?: ProgressListener;
  /** The request's format (openai, anthropic, mcp…), for traces. Absent = native. */
  format?: string;
}

export interface DispatcherOptions {
  registry: ToolRegistry;
  /** Runs idempotent tools once per key (the effect ledger). */
  guard: EffectGuard;
  /** Runs calls made in a session against its staged state. */
  sessions: SessionRunner;
  defaultTimeoutMs: number;
  maxContentChars: number;
  /** Keeps the whole of a content that was cut (SPEC §11); absent: the rest is dropped. */
  results?: Pick<ResultResources, 'keep'>;
  metrics?: Metrics;
  /** One `execute_tool` span per call when tracing (SPEC §12); absent or null = not tracing, no span work at all. */
  tracing?: CallTracer | null;
  /** Told of every finished call, after its metrics and log line (the console's call feed); must not throw. */
  onCall?: (call: FinishedCall) => void;
}

/** A finished call as its observer sees it. */
export interface FinishedCall {
  /** Epoch ms when it finished. */
  at: number;
  /** Whether the tool exists for this caller (an unknown name is the model's, not a tool's). */
  known: boolean;
  /** The arguments as validated; null when the tool is unknown or they were not JSON. */
  params: unknown;
  result: InvocationResult;
  scope: InvocationScope;
}

/** What every step of one call's execution needs; made once per call. */
interface Execution {
  tool: RegisteredTool;
  /** The validated arguments, frozen. */
  params: Record<string, unknown>;
  identity: CallIdentity;
  scope: InvocationScope;
  /** Epoch ms. */
  deadline: number;
  budgetMs: number;
  /** The ledger key, once the ledger let this call run (idempotent tools only). */
  idempotencyKey: string | null;
  /** A session built-in in a session the model did not name: its result tells the model the id. */
  announceSession: boolean;
}

const MAX_NESTING = 8;

export class Dispatcher implements NestedCalls<InvocationScope> {
  readonly #options: DispatcherOptions;

  constructor(options: DispatcherOptions) {
    this.#options = options;
  }

  get registry(): ToolRegistry {
    return this.#options.registry;
  }

  invoke(call: ToolCall, scope: InvocationScope): Promise<InvocationResult> {
    const tracing = this.#options.tracing;
    return tracing == null ? this.#invoke(call, scope) : tracing.traceCall(call, scope, () => this.#invoke(call, scope));
  }

  async #invoke(call: ToolCall, scope: InvocationScope): Promise<InvocationResult> {
    const startedAt = performance.now();
    const identity: CallIdentity = { id: call.id ?? `call_${randomUUID()}`, name: call.name, toolHash: null, startedAt };
    const max = this.#options.maxContentChars;
    const allows = scope.allows;
    const tool = allows === undefined || allows(call.name) ? this.#options.registry.get(call.name) : undefined;
    if (tool === undefined) {
      const visible = this.#options.registry.list().filter((t) => allows === undefined || allows(t.name));
      const [message, detail] = explain.unknownTool(call.name, visible.map((t) => t.name));
      return this.#finish(scope, identity, null, failure(identity, 'unknown_tool', message, detail, max));
    }
    identity.toolHash = tool.hash;
    let params: unknown;
    try {
      params = call.parsed === true ? call.arguments : parseArguments(call.arguments);
    } catch (err) {
      const [message, detail] = explain.notJson(tool, reasonOf(err));
      return this.#finish(scope, identity, null, failure(identity, 'invalid_arguments', message, detail, max));
    }
    if (!tool.validateParams(params)) {
      const [message, detail] = explain.invalid(tool);
      return this.#finish(scope, identity, params, failure(identity, 'invalid_arguments', message, detail, max));
    }
    // The tool's own limit may be longer than the default; the caller's X-Timeout-Ms can only shorten it.
    const budgetMs = Math.min(scope.timeoutMs ?? Infinity, tool.timeoutMs ?? scope.defaultTimeoutMs ?? this.#options.defaultTimeoutMs);
    const deadline = scope.receivedAt + budgetMs;
    if (Date.now() >= deadline) {
      const [message, detail] = explain.deadline(tool, budgetMs);
      return this.#finish(scope, identity, params, failure(identity, 'deadline_exceeded', message, detail, max));
    }
    let announce = false;
    if (tool.takesSessionHandle) {
      const chosen = chooseSession(scope.sessionId, scope.sessionSource, params as Record<string, unknown>);
      if (chosen.id !== scope.sessionId || scope.sessionSource === 'connection') scope = { ...scope, sessionId: chosen.id, sessionSource: 'header' };
      announce = chosen.announce;
    }
    const run: Execution = { tool, params: deepFreeze(params) as Record<string, unknown>, identity, scope, deadline, budgetMs, idempotencyKey: null, announceSession: announce };
    if (scope.sessionId !== null) this.#options.sessions.assertAvailable();
    if (tool.idempotency === null || tool.idempotency.strategy === 'none') return this.#execute(run);
    // An idempotent tool runs through the effect guard (the ledger): once per key. The ledger
    // records a success only after its session writes are committed.
    let executed = false;
    const result = await this.#options.guard.run(
      { tool, params: run.params, identity, sessionId: scope.sessionId, caller: scope.caller, headerKey: call.idempotencyKey ?? null, deadline, cancellation: scope.cancellation, log: scope.log },
      // Arrows passed in place (not named consts): tsx would wrap a named one in a defineProperty per call.
      (key) => {
        executed = true;
        run.idempotencyKey = key;
        return this.#execute(run);
      },
      () => this.#context(run, scope.sessionId === null ? null : this.#options.sessions.view(scope.sessionId)),
    );
    // A replay, or an answer of the ledger itself (in_progress…), still records the call's event.
    if (!executed) return this.#finish(scope, identity, params, result);
    this.#observe(scope, identity, params, result); // now that the ledger has put its key on the result
    return result;
  }

  /** One execution: the handler (re-run on a session conflict), its session writes and its event. */
  #execute(run: Execution): Promise<InvocationResult> {
    return run.scope.sessionId === null ? this.#runAlone(run) : this.#runInSession(run, run.scope.sessionId);
  }

  async #runAlone(run: Execution): Promise<InvocationResult> {
    const result = await this.#run(run, this.#context(run, null));
    return this.#record(run.scope, run.identity, run.params, result, run.idempotencyKey === null);
  }

  async #runInSession(run: Execution, sessionId: string): Promise<InvocationResult> {
    const { tool, params, identity, scope, deadline, budgetMs } = run;
    const call: SessionRun = { sessionId, identity, params, caller: scope.caller, parentCallId: scope.parentCallId, log: scope.log, tool, deadline, budgetMs };
    const result = await this.#options.sessions.run(call, (session) => this.#run(run, this.#context(run, session)));
    return this.#record(scope, identity, params, result, run.idempotencyKey === null);
  }

  #context({ tool, identity, scope, deadline, idempotencyKey }: Execution, session: SessionHandle | null): CallContext {
    return new CallContext({
      callId: identity.id,
      toolName: tool.name,
      requestId: scope.requestId,
      idempotencyKey,
      session,
      deadline,
      sessionId: scope.sessionId,
      caller: scope.caller,
      resources: this.#options.registry.resources,
      log: scope.log,
      calls: this,
      scope,
      progress: scope.progress ?? null,
    });
  }

  async #run({ tool, params, identity, scope, budgetMs, announceSession: announce }: Execution, context: CallContext): Promise<InvocationResult> {
    const max = this.#options.maxContentChars;
    const settled = await settle(() => tool.handler(params, context), context, scope.cancellation);
    if (settled.kind === 'deadline' || settled.kind === 'cancelled') {
      const [message, detail] = settled.kind === 'deadline' ? explain.deadline(tool, budgetMs) : explain.cancelled(tool);
      return failure(identity, settled.kind === 'deadline' ? 'deadline_exceeded' : 'cancelled', message, detail, max);
    }
    if (settled.kind === 'threw') {
      if (settled.error instanceof StoreUnavailableError) throw settled.error;
      if (settled.error instanceof ToolFailure) {
        context.log.warn({ code: settled.error.code, detail: settled.error.detail }, 'tool failed');
        return failure(identity, settled.error.code, settled.error.message, settled.error.detail, max);
      }
      context.log.warn({ err: settled.error }, 'tool handler threw');
      const [message, detail] = explain.handlerError(tool, reasonOf(settled.error));
      return failure(identity, 'handler_error', message, detail, max);
    }
    const checked = checkResult(tool, settled.value);
    if (typeof checked === 'string') {
      context.log.warn({ problem: checked }, 'tool returned an invalid result');
      const [message, detail] = explain.resultInvalid(tool, checked);
      return failure(identity, 'result_invalid', message, detail, max);
    }
    const { message, value, success, exclude, valueJson, attachments } = announce ? announceSession(checked, scope.sessionId!) : checked;
    const error = success ? null : { code: 'tool_failed' as const, detail: message };
    const parts: ResultParts = { success, message, value, excludeValue: exclude, valueJson, error, toolHash: tool.hash, attachments };
    const limit = tool.maxContentChars ?? max;
    const shown = exclude ? null : valueJson;
    // Cheap test first: most results are far below the limit.
    const named = attachments == null ? message : withAttachmentsNamed(message, attachments);
    if (named.length + (shown?.length ?? 0) + 2 > limit) {
      const whole = joinContent(named, shown);
      if (whole.length > limit) {
        const kept = await this.#keepWhole(scope, identity, whole);
        if (kept !== null) parts.kept = kept;
      }
    }
    return invocationResult(identity, parts, limit);
  }

  /** Keeps a cut content whole for its caller; a store that is down loses the rest, not the call. */
  async #keepWhole(scope: InvocationScope, identity: CallIdentity, content: string): Promise<ResultRef | null> {
    const results = this.#options.results;
    if (results === undefined) return null;
    try {
      return await results.keep({ caller: scope.caller, tool: identity.name, callId: identity.id, content });
    } catch (err) {
      if (!(err instanceof StoreUnavailableError)) throw err;
      scope.log.warn({ err, callId: identity.id }, 'the whole of a cut result could not be kept: the store is unreachable');
      return null;
    }
  }

  /** A handler's `context.invoke`: the same dispatch, under the parent's deadline and cancellation. */
  async nested(name: string, params: Record<string, unknown>, parent: CallContext, scope: InvocationScope): Promise<NestedResult> {
    const depth = (scope.depth ?? 0) + 1;
    if (depth > MAX_NESTING) {
      return { success: false, message: `Nested tool calls are limited to ${MAX_NESTING} levels.`, value: null, error: { code: 'handler_error', detail: 'nesting limit reached' } };
    }
    const now = Date.now();
    const result = await this.invoke(
      { id: null, name, arguments: params },
      { ...scope, timeoutMs: Math.max(0, parent.deadline - now), receivedAt: now, cancellation: parent.ended, parentCallId: parent.callId, depth },
    );
    return { success: result.success, message: result.message, value: result.value, error: result.error };
  }

  /** Records the ToolInvoked event of a call that wrote nothing to its session (without a session: at once). */
  #finish(scope: InvocationScope, identity: CallIdentity, params: unknown, result: InvocationResult): InvocationResult | Promise<InvocationResult> {
    if (scope.sessionId === null) return this.#record(scope, identity, params, result);
    const call: SessionCall = { sessionId: scope.sessionId, identity, params, caller: scope.caller, parentCallId: scope.parentCallId, log: scope.log };
    return this.#options.sessions.record(call, result).then((recorded) => this.#record(scope, identity, params, recorded));
  }

  /**
   * The call in the metrics, at level info its log line, and to the observer (`observe` false: a
   * call under the ledger, observed once the ledger has finished with its result).
   */
  #record(scope: InvocationScope, identity: CallIdentity, params: unknown, result: InvocationResult, observe = true): InvocationResult {
    this.#options.metrics?.called(identity.toolHash === null ? UNKNOWN_TOOL : identity.name, result.error?.code ?? 'success', result.duration_ms);
    if (scope.log.isLevelEnabled('info')) {
      scope.log.info(
        { event: 'ToolInvoked', tool: identity.name, callId: identity.id, session: scope.sessionId, caller: scope.caller, success: result.success, code: result.error?.code ?? null, durationMs: result.duration_ms },
        'tool invoked',
      );
    }
    if (observe) this.#observe(scope, identity, params, result);
    return result;
  }

  #observe(scope: InvocationScope, identity: CallIdentity, params: unknown, result: InvocationResult): void {
    this.#options.onCall?.({ at: Date.now(), known: identity.toolHash !== null, params, result, scope });
  }
}
