/**
 * Dispatch (SPEC §3): lookup → parse arguments → validate → deadline → context → handler →
 * result check → content → ToolInvoked event. Every tool-level failure is a result, never a throw;
 * only a store that cannot be reached escapes, as StoreUnavailableError (503 at the HTTP edge).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { deepFreeze, JsonInputError, parseJson } from '../json.ts';
import { StagedSession } from '../sessions/staged.ts';
import { StoreUnavailableError, type Store } from '../store/types.ts';
import { hashJson } from './hash.ts';
import { elapsedMs, explain, failure, reasonOf, type CallIdentity, type InvocationResult } from './outcome.ts';
import type { RegisteredTool, ToolRegistry } from './registry.ts';
import { renderContent } from './render.ts';
import { violations } from './schema.ts';
import { CallContext, type Cancellation } from './context.ts';
import { settle } from './race.ts';
import { LedgerGuard } from '../ledger/guard.ts';
import type { NestedResult } from './types.ts';

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
  caller: string | null;
  /** The caller's X-Timeout-Ms, counted from `receivedAt` (epoch ms). */
  timeoutMs: number | null;
  receivedAt: number;
  log: Logger;
  /** Fires when the caller goes away (or, for a nested call, when its parent call ends). */
  cancellation: Cancellation | null;
  parentCallId?: string;
  depth?: number;
}

export interface DispatcherOptions {
  registry: ToolRegistry;
  store: Store;
  defaultTimeoutMs: number;
  maxContentChars: number;
  /** How long an idempotent call's ledger lease lasts unless renewed (it is, while the handler runs). */
  ledgerLeaseMs?: number;
}

const MAX_NESTING = 8;
const DEFAULT_LEDGER_LEASE_MS = 10_000;

export class Dispatcher {
  readonly #options: DispatcherOptions;
  readonly #ledger: LedgerGuard;

  constructor(options: DispatcherOptions) {
    this.#options = options;
    this.#ledger = new LedgerGuard(options.store.ledger, options.ledgerLeaseMs ?? DEFAULT_LEDGER_LEASE_MS, options.maxContentChars);
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
      return this.#finish(scope, identity, null, failure(identity, 'unknown_tool', message, detail, max), new Map());
    }
    identity.toolHash = tool.hash;
    let params: unknown;
    try {
      params = call.parsed === true ? call.arguments : parseArguments(call.arguments);
    } catch (err) {
      const [message, detail] = explain.notJson(tool, reasonOf(err));
      return this.#finish(scope, identity, null, failure(identity, 'invalid_arguments', message, detail, max), new Map());
    }
    if (!tool.validateParams(params)) {
      const [message, detail] = explain.invalid(tool);
      return this.#finish(scope, identity, params, failure(identity, 'invalid_arguments', message, detail, max), new Map());
    }
    const budgetMs = Math.min(scope.timeoutMs ?? Infinity, tool.timeoutMs ?? Infinity, this.#options.defaultTimeoutMs);
    const deadline = scope.receivedAt + budgetMs;
    if (Date.now() >= deadline) {
      const [message, detail] = explain.deadline(tool, budgetMs);
      return this.#finish(scope, identity, params, failure(identity, 'deadline_exceeded', message, detail, max), new Map());
    }
    const session = scope.sessionId === null ? null : new StagedSession(this.#options.store, scope.sessionId);
    if (session !== null) this.#options.store.assertAvailable();
    const frozen = deepFreeze(params) as Record<string, unknown>;
    const context = this.#context(tool, identity, scope, session, deadline);
    // An idempotent tool runs through the effect ledger (src/ledger/guard.ts): once per key.
    const result =
      tool.idempotency === null || tool.idempotency.strategy === 'none'
        ? await this.#run(tool, frozen, identity, scope, context, budgetMs)
        : await this.#ledger.run(
            {
              tool,
              params: frozen,
              identity,
              context,
              sessionId: scope.sessionId,
              caller: scope.caller,
              headerKey: call.idempotencyKey ?? null,
              deadline,
              cancellation: scope.cancellation,
              log: scope.log,
            },
            () => this.#run(tool, frozen, identity, scope, context, budgetMs),
          );
    return this.#finish(scope, identity, params, result, session?.close() ?? new Map());
  }

  #context(tool: RegisteredTool, identity: CallIdentity, scope: InvocationScope, session: StagedSession | null, deadline: number): CallContext {
    return new CallContext({
      callId: identity.id,
      toolName: tool.name,
      session,
      deadline,
      caller: scope.caller,
      resources: this.#options.registry.resources,
      log: scope.log,
      logBindings: scope.sessionId === null ? { callId: identity.id, tool: tool.name } : { callId: identity.id, tool: tool.name, session: scope.sessionId },
      invoke: (name, nestedParams, parent) => this.#nested(name, nestedParams, parent, scope),
    });
  }

  async #run(
    tool: RegisteredTool,
    params: Record<string, unknown>,
    identity: CallIdentity,
    scope: InvocationScope,
    context: CallContext,
    budgetMs: number,
  ): Promise<InvocationResult> {
    const max = this.#options.maxContentChars;
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

  /** Records the ToolInvoked event: committed with the session's staged writes, or logged alone. */
  async #finish(
    scope: InvocationScope,
    identity: CallIdentity,
    params: unknown,
    result: InvocationResult,
    writes: ReadonlyMap<string, string>,
  ): Promise<InvocationResult> {
    if (scope.log.isLevelEnabled('info')) {
      scope.log.info(
        { event: 'ToolInvoked', tool: identity.name, callId: identity.id, session: scope.sessionId, caller: scope.caller, success: result.success, code: result.error?.code ?? null, durationMs: result.duration_ms },
        'tool invoked',
      );
    }
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
      await this.#options.store.commitSession(scope.sessionId, {
        writes: result.success ? writes : new Map(),
        event: JSON.stringify(event),
      });
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
