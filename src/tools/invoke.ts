/**
 * Dispatch (SPEC §3): lookup → parse arguments → validate → deadline → context → handler →
 * result check → content → ToolInvoked event. Every tool-level failure is a result, never a throw;
 * only a store that cannot be reached escapes, as StoreUnavailableError (503 at the HTTP edge).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { deepFreeze, JsonInputError, parseJson } from '../json.ts';
import { KeyedLock } from '../sessions/lock.ts';
import { StagedSession } from '../sessions/staged.ts';
import { StoreUnavailableError, type SessionCommit, type Store } from '../store/types.ts';
import { hashJson } from './hash.ts';
import { elapsedMs, explain, failure, reasonOf, type CallIdentity, type InvocationResult } from './outcome.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import { renderContent } from './render.ts';
import { violations } from './schema.ts';
import { CallContext, type Cancellation } from './context.ts';
import { settle } from './race.ts';
import type { NestedResult } from './types.ts';
import type { ProgressListener } from './progress.ts';

export interface ToolCall {
  id: string | null;
  name: string;
  /** An object, a JSON string (OpenAI, Responses), or absent. */
  arguments: unknown;
  /** The arguments are already a parsed body: a string is a wrong value, not JSON text. */
  parsed?: boolean;
}

/** Who calls and under which limits; shared by the calls of one request. */
export interface InvocationScope {
  requestId: string;
  sessionId: string | null;
  caller: string | null;
  /** The caller's X-Timeout-Ms, counted from `receivedAt` (epoch ms). */
  timeoutMs: number | null;
  receivedAt: number;
  log: Logger;
  /** Fires when the caller goes away (or, for a nested call, when its parent call ends). */
  cancellation: Cancellation | null;
  parentCallId?: string;
  depth?: number;
  /** Where the handlers' `context.progress` reports go (an SSE or MCP stream); absent = nowhere. */
  progress?: ProgressListener;
}

export interface DispatcherOptions {
  registry: ToolRegistry;
  store: Store;
  defaultTimeoutMs: number;
  maxContentChars: number;
}

const MAX_NESTING = 8;
/** Attempts of a handler whose session writes keep conflicting with other calls' (bounded by the deadline too). */
const MAX_SESSION_ATTEMPTS = 32;
const NOTHING_STAGED: Pick<SessionCommit, 'reads' | 'writes'> = { reads: new Map(), writes: new Map() };

export class Dispatcher {
  readonly #options: DispatcherOptions;
  /** Retries after a session conflict run one at a time per session here; replicas race by version. */
  readonly #sessionRetries = new KeyedLock();

  constructor(options: DispatcherOptions) {
    this.#options = options;
  }

  get registry(): ToolRegistry {
    return this.#options.registry;
  }

  async invoke(call: ToolCall, scope: InvocationScope): Promise<InvocationResult> {
    const startedAt = performance.now();
    const identity: CallIdentity = { id: call.id ?? `call_${randomUUID()}`, name: call.name, toolHash: null, startedAt };
    const max = this.#options.maxContentChars;
    const tool = this.#options.registry.get(call.name);
    if (tool === undefined) {
      const [message, detail] = explain.unknownTool(call.name, this.#options.registry.list().map((t) => t.name));
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
    const budgetMs = Math.min(scope.timeoutMs ?? Infinity, tool.timeoutMs ?? Infinity, this.#options.defaultTimeoutMs);
    const deadline = scope.receivedAt + budgetMs;
    if (Date.now() >= deadline) {
      const [message, detail] = explain.deadline(tool, budgetMs);
      return this.#finish(scope, identity, params, failure(identity, 'deadline_exceeded', message, detail, max));
    }
    const frozen = deepFreeze(params) as Record<string, unknown>;
    const sessionId = scope.sessionId;
    if (sessionId === null) {
      const result = await this.#run(tool, frozen, identity, scope, null, deadline, budgetMs);
      return this.#finish(scope, identity, params, result);
    }
    this.#options.store.assertAvailable();
    // Optimistic concurrency: run, then commit only if what the handler read is unchanged; else run again.
    const attempt = async (): Promise<InvocationResult | null> => {
      const session = new StagedSession(this.#options.store, sessionId);
      const result = await this.#run(tool, frozen, identity, scope, session, deadline, budgetMs);
      return this.#commit(scope, identity, params, result, session.close());
    };
    let result = await attempt();
    for (let attempts = 1; result === null; attempts++) {
      if (attempts >= MAX_SESSION_ATTEMPTS || Date.now() >= deadline) {
        const [message, detail] = attempts >= MAX_SESSION_ATTEMPTS ? explain.sessionContended(tool, attempts) : explain.deadline(tool, budgetMs);
        const code = attempts >= MAX_SESSION_ATTEMPTS ? 'handler_error' : 'deadline_exceeded';
        return this.#finish(scope, identity, params, failure(identity, code, message, detail, max));
      }
      scope.log.debug({ tool: tool.name, callId: identity.id, session: sessionId, attempt: attempts + 1 }, 'the session changed under the call: running it again');
      result = await this.#sessionRetries.run(sessionId, attempt);
    }
    return result;
  }

  async #run(
    tool: RegisteredTool,
    params: Record<string, unknown>,
    identity: CallIdentity,
    scope: InvocationScope,
    session: StagedSession | null,
    deadline: number,
    budgetMs: number,
  ): Promise<InvocationResult> {
    const max = this.#options.maxContentChars;
    const context = new CallContext({
      callId: identity.id,
      toolName: tool.name,
      session,
      deadline,
      caller: scope.caller,
      resources: this.#options.registry.resources,
      log: scope.log,
      logBindings: scope.sessionId === null ? { callId: identity.id, tool: tool.name } : { callId: identity.id, tool: tool.name, session: scope.sessionId },
      invoke: (name, nestedParams, parent) => this.#nested(name, nestedParams, parent, scope),
      progress: scope.progress ?? null,
    });
    const settled = await settle(() => tool.handler(params, context), context, scope.cancellation);
    if (settled.kind === 'deadline' || settled.kind === 'cancelled') {
      const [message, detail] = settled.kind === 'deadline' ? explain.deadline(tool, budgetMs) : explain.cancelled(tool);
      return failure(identity, settled.kind === 'deadline' ? 'deadline_exceeded' : 'cancelled', message, detail, max);
    }
    if (settled.kind === 'threw') {
      if (settled.error instanceof StoreUnavailableError) throw settled.error;
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
    const { message, value, success, exclude, valueJson } = checked;
    return {
      id: identity.id,
      name: tool.name,
      success,
      message,
      value,
      exclude_value_from_context: exclude,
      error: success ? null : { code: 'tool_failed', detail: message },
      content: renderContent(message, exclude ? null : valueJson, max),
      replayed: false,
      effect_id: null,
      idempotency_key: null,
      tool_hash: tool.hash,
      duration_ms: elapsedMs(identity.startedAt),
    };
  }

  async #nested(name: string, params: Record<string, unknown>, parent: CallContext, scope: InvocationScope): Promise<NestedResult> {
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

  /** Records the ToolInvoked event of a call that wrote nothing to its session. */
  async #finish(scope: InvocationScope, identity: CallIdentity, params: unknown, result: InvocationResult): Promise<InvocationResult> {
    return (await this.#commit(scope, identity, params, result, NOTHING_STAGED)) ?? result; // nothing read: never a conflict
  }

  /**
   * Records the ToolInvoked event, committed with the session's staged writes (only on success) or
   * logged alone. Answers null, recording nothing, when the session changed under the handler.
   */
  async #commit(
    scope: InvocationScope,
    identity: CallIdentity,
    params: unknown,
    result: InvocationResult,
    staged: Pick<SessionCommit, 'reads' | 'writes'>,
  ): Promise<InvocationResult | null> {
    if (scope.sessionId !== null) {
      const event = {
        type: 'ToolInvoked',
        tool: identity.name.slice(0, 128), // an unknown name can be as long as the body
        call_id: identity.id,
        ...(scope.parentCallId && { parent_call_id: scope.parentCallId }),
        arguments_hash: params === null || params === undefined ? null : hashJson(params),
        success: result.success,
        error_code: result.error?.code ?? null,
        duration_ms: result.duration_ms,
        at: new Date().toISOString(),
        caller: scope.caller,
      };
      // Reads matter only to a call that writes: a read-only call never conflicts.
      const writes = result.success ? staged.writes : NOTHING_STAGED.writes;
      const reads = writes.size > 0 ? staged.reads : NOTHING_STAGED.reads;
      if (!(await this.#options.store.commitSession(scope.sessionId, { reads, writes, event: JSON.stringify(event) }))) return null;
    }
    if (scope.log.isLevelEnabled('info')) {
      scope.log.info(
        { event: 'ToolInvoked', tool: identity.name, callId: identity.id, session: scope.sessionId, caller: scope.caller, success: result.success, code: result.error?.code ?? null, durationMs: result.duration_ms },
        'tool invoked',
      );
    }
    return result;
  }
}

/** Arguments arrive as an object, a JSON string, or not at all; an empty string means none. */
function parseArguments(raw: unknown): unknown {
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  if (raw.trim() === '') return {};
  try {
    return parseJson(raw);
  } catch (err) {
    throw err instanceof JsonInputError ? err : new JsonInputError('not valid JSON');
  }
}

interface CheckedResult {
  message: string;
  value: unknown;
  success: boolean;
  exclude: boolean;
  valueJson: string | null;
}

/** A ToolResult with its defaults applied, or what is wrong with it. */
function checkResult(tool: RegisteredTool, raw: unknown): CheckedResult | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return `the handler returned ${describeType(raw)}, not a ToolResult object`;
  const r = raw as Record<string, unknown>;
  if (typeof r.message !== 'string') return 'the handler returned a ToolResult without a string message';
  if (r.success !== undefined && typeof r.success !== 'boolean') return 'ToolResult.success must be a boolean';
  if (r.exclude_value_from_context !== undefined && typeof r.exclude_value_from_context !== 'boolean') {
    return 'ToolResult.exclude_value_from_context must be a boolean';
  }
  const value = r.value === undefined ? null : r.value;
  let valueJson: string | null = null;
  if (value !== null) {
    try {
      valueJson = JSON.stringify(value) ?? null;
    } catch (err) {
      return `ToolResult.value has no JSON form: ${reasonOf(err)}`;
    }
    if (valueJson === null) return 'ToolResult.value has no JSON form';
  }
  const success = r.success ?? true;
  if (success && value !== null && tool.validateResult !== null && !tool.validateResult(value)) {
    return `value breaks the result schema: ${violations(tool.validateResult.errors).join('; ')}`;
  }
  return { message: r.message, value, success, exclude: r.exclude_value_from_context === true, valueJson };
}

function describeType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'undefined' ? 'nothing' : `a ${typeof value}`;
}
