/**
 * Runs an idempotent tool's call through the ledger (docs/ledger.md): begin → run the handler under a
 * renewed lease → record a success or abort → answer; or replay the record; or wait for the call
 * that holds the lease. Tool-level outcomes are results; only the Idempotency-Key conflicts
 * (409, 422) and an unreachable store are thrown, for the HTTP edge to answer.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { hashJson } from '../tools/hash.ts';
import { explain } from '../tools/explain.ts';
import { failure, invocationResult, type CallIdentity, type InvocationResult } from '../tools/outcome.ts';
import type { Next, PipelineCall, Stage } from '../tools/pipeline/index.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { SessionHandle } from '../tools/types.ts';
import {
  effectRecord,
  type BeginOutcome,
  type BeginRequest,
  type EffectLedger,
  type EntryLabels,
  type ToolEffect,
  type UnknownEffect,
} from '../store/ledger.ts';
import { derivedKeyPart, runScopeName, scopeName } from './key.ts';
import type { Metrics } from '../metrics.ts';
import { withSpan } from '../tracing/index.ts';
import { IdempotencyKeyInFlight, IdempotencyKeyReused, KeyFunctionError, StoreNotDurable } from '../errors.ts';

/**
 * A lease's fencing token: it only has to be unique (never guessed: it is not a secret), so a
 * random prefix per process and a counter instead of a UUID per call.
 */
const TOKEN_PREFIX = randomUUID();
let tokens = 0;
function leaseToken(): string {
  return `${TOKEN_PREFIX}:${(tokens++).toString(36)}`;
}

/** A lease held while its handler runs. */
interface HeldLease {
  log: Logger;
  key: string;
  token: string;
  /** performance.now() of the begin or of the last renewal. */
  renewedAt: number;
}

/**
 * Keeps the leases of running handlers alive: one shared timer for all of them (not one per call),
 * ticking every sixth of the lease and renewing each lease held for a third of it or more — so a
 * lease is renewed between 1/3 and 1/2 of its length after its last renewal.
 */
class LeaseRenewer {
  readonly #held = new Set<HeldLease>();
  readonly #ledger: EffectLedger;
  readonly #leaseMs: number;
  #timer: NodeJS.Timeout | null = null;

  constructor(ledger: EffectLedger, leaseMs: number) {
    this.#ledger = ledger;
    this.#leaseMs = leaseMs;
  }

  hold(lease: HeldLease): void {
    this.#held.add(lease);
    if (this.#timer === null) {
      this.#timer = setInterval(() => this.#tick(), Math.max(1, Math.floor(this.#leaseMs / 6)));
      this.#timer.unref();
    }
  }

  release(lease: HeldLease): void {
    this.#held.delete(lease);
    if (this.#held.size === 0 && this.#timer !== null) {
      clearInterval(this.#timer);
      this.#timer = null;
    }
  }

  #tick(): void {
    const now = performance.now();
    const due = this.#leaseMs / 3;
    for (const lease of this.#held) {
      if (now - lease.renewedAt < due) continue;
      lease.renewedAt = now;
      void this.#renew(lease);
    }
  }

  async #renew({ log, key, token }: HeldLease): Promise<void> {
    try {
      if (!(await this.#ledger.renew(key, token, this.#leaseMs))) log.warn({ ledgerKey: key }, 'ledger lease was lost while the handler ran');
    } catch (err) {
      log.warn({ err, ledgerKey: key }, 'ledger lease renewal failed');
    }
  }
}

/** The first waits are short (a fast handler answers within ms), then capped. */
const FIRST_WAIT_MS = 5;
const MAX_WAIT_MS = 50;

/**
 * The ledger stage of the call pipeline: an idempotent tool's call runs once per key; a repeat
 * replays the recorded result; the others pass straight on.
 */
export class LedgerGuard implements Stage {
  readonly name = 'ledger';
  readonly #ledger: EffectLedger;
  readonly #leaseMs: number;
  readonly #metrics: Metrics | undefined;
  readonly #renewer: LeaseRenewer;
  /** The session as a custom key function sees it: staged, never committed. */
  readonly #view: (sessionId: string, owner: string | null) => SessionHandle;

  constructor(ledger: EffectLedger, leaseMs: number, view: (sessionId: string, owner: string | null) => SessionHandle, metrics?: Metrics) {
    this.#ledger = ledger;
    this.#view = view;
    this.#leaseMs = leaseMs;
    this.#renewer = new LeaseRenewer(ledger, leaseMs);
    this.#metrics = metrics;
  }

  run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    const idempotency = call.tool.idempotency;
    if (call.call.runKey !== undefined) return this.#guard(call, next);
    return idempotency === null || idempotency.strategy === 'none' ? next() : this.#guard(call, next);
  }

  /** The key's scope and part, and how long a success is kept: a program's run key first, else the tool's strategy. */
  #keyOf(call: PipelineCall, paramsHash: string): { scopeKey: string; part: string; ttlS: number | null } {
    const { tool, scope } = call;
    const runKey = call.call.runKey;
    if (runKey !== undefined) {
      return { scopeKey: runScopeName(scope.caller.id, scope.sinks.sessionId), part: `${runKey.run}:${runKey.index}:${paramsHash}`, ttlS: runKey.ttlS };
    }
    const headerKey = call.call.idempotencyKey ?? null;
    const part =
      headerKey ??
      (tool.idempotency!.strategy === 'auto'
        ? paramsHash
        : derivedKeyPart(tool, call.params, call.context(scope.sinks.sessionId === null ? null : this.#view(scope.sinks.sessionId, scope.caller.id))));
    return { scopeKey: scopeName(tool.idempotency!.scope, scope.sinks.sessionId, scope.caller.id), part, ttlS: tool.idempotency!.ttl_s };
  }

  /** Begin, then run (`next`) or replay or wait; the call's context is made only for a custom key function. */
  async #guard(call: PipelineCall, next: Next): Promise<InvocationResult> {
    const { tool, identity, scope } = call;
    const headerKey = call.call.runKey === undefined ? (call.call.idempotencyKey ?? null) : null;
    const paramsHash = hashJson(call.params);
    let keyOf: { scopeKey: string; part: string; ttlS: number | null };
    try {
      keyOf = this.#keyOf(call, paramsHash);
    } catch (err) {
      if (!(err instanceof KeyFunctionError)) throw err;
      const message = `Tool "${tool.name}" could not compute its idempotency key (${err.message}), so it did not run. This is not caused by your arguments.`;
      return failure(identity, 'handler_error', message, `idempotency key function: ${err.message}`);
    }
    const { scopeKey, part, ttlS } = keyOf;
    const key = `${scopeKey}:${tool.name}:${part}`;
    const labels: EntryLabels = { tool: tool.name, scope: scopeKey, paramsHash };
    const token = leaseToken();
    const request: BeginRequest = {
      tool: tool.name,
      scope: scopeKey,
      paramsHash,
      key,
      token,
      leaseMs: this.#leaseMs,
      strictPayload: headerKey !== null,
      durable: true,
      // A program's inner call may reach the ledger without the tool having a strategy of its own.
      onLost: tool.idempotency?.on_lost ?? (tool.annotations?.idempotent === true ? 'rerun' : 'unknown'),
      effectId: randomUUID(),
      keepS: ttlS,
    };
    let waitMs = FIRST_WAIT_MS;
    for (let waited = false; ; waited = true) {
      const outcome = await withSpan('ledger begin', { 'toolport.tool': tool.name }, () => this.#begin(call.scope.sinks.log, request));
      if (outcome.kind === 'run') {
        this.#metrics?.ledgerLookup('miss');
        return this.#execute(call, { key, labels, token, ttlS, effectId: request.effectId! }, next);
      }
      if (outcome.kind === 'replay') {
        this.#metrics?.ledgerLookup(waited ? 'wait' : 'hit');
        return this.#replay(identity, outcome.effect);
      }
      if (outcome.kind === 'mismatch') throw new IdempotencyKeyReused();
      if (outcome.kind === 'unknown') return this.#keyed(this.#unknown(call, outcome.lost, outcome.fresh), key);
      if (headerKey !== null) throw new IdempotencyKeyInFlight(Math.max(1, Math.ceil(outcome.leaseLeftMs / 1000)));
      // Without the header the caller cannot tell a retry from a new call: wait for the one running.
      const left = call.deadline - Date.now();
      scope.options.cancellation?.watch(); // a waiting call must notice its caller going away
      if (scope.options.cancellation?.reason) return this.#keyed(failure(identity, 'cancelled', ...explain.cancelled(tool)), key);
      if (left <= 0) {
        this.#metrics?.ledgerLookup('in_progress');
        return this.#keyed(this.#inProgress(identity, tool), key);
      }
      await sleep(Math.min(waitMs, left, Math.max(1, outcome.leaseLeftMs)));
      waitMs = Math.min(waitMs * 2, MAX_WAIT_MS);
    }
  }

  /** A lease the replicas did not acknowledge is dropped (best effort) and the call answers 503: nothing ran. */
  async #begin(log: Logger, request: BeginRequest): Promise<BeginOutcome> {
    try {
      return await this.#ledger.begin(request);
    } catch (err) {
      if (err instanceof StoreNotDurable) await this.#abort(log, request.key, request.token);
      throw err;
    }
  }

  async #execute(
    call: PipelineCall,
    entry: { key: string; labels: EntryLabels; token: string; ttlS: number | null; effectId: string },
    next: Next,
  ): Promise<InvocationResult> {
    const { key, labels, token, ttlS } = entry;
    const log = call.scope.sinks.log;
    const lease: HeldLease = { log, key, token, renewedAt: performance.now() };
    this.#renewer.hold(lease);
    call.ledgerKey = key; // the handler's context tells it
    let result: InvocationResult;
    try {
      result = await next();
    } catch (err) {
      this.#renewer.release(lease);
      // A session commit the replicas did not acknowledge still applied on the primary: the handler
      // ran, so the lease is left to lapse (on_lost decides) rather than freed for a silent re-run.
      if (!(err instanceof StoreNotDurable)) await this.#abort(log, key, token);
      throw err;
    }
    this.#renewer.release(lease);
    // Only successes are recorded; a failure, a deadline or a cancellation frees the key at once.
    if (!result.success) {
      await this.#abort(log, key, token);
      return this.#keyed(result, key);
    }
    const effect = effectRecord(
      entry.effectId,
      key,
      { tool: call.tool.name, paramsHash: labels.paramsHash, toolHash: result.tool_hash ?? call.tool.hash },
      result,
      ttlS,
    );
    try {
      if (!(await withSpan('ledger complete', { 'toolport.tool': call.tool.name }, () => this.#ledger.complete(labels, token, effect, ttlS, true)))) {
        log.warn({ ledgerKey: key }, 'ledger lease lapsed while the handler ran: its result was not recorded');
      }
    } catch (err) {
      // The effect happened: answer it rather than a 503. Unrecorded (or not held by the replicas),
      // the entry stays a lease, and a lease that lapses is the tool's on_lost to decide.
      log.error({ err, ledgerKey: key }, 'the ledger did not record a success');
    }
    result.effect_id = effect.effect_id;
    return this.#keyed(result, key);
  }

  #replay(identity: CallIdentity, effect: ToolEffect): InvocationResult {
    const value = effect.result_value;
    const excludeValue = effect.exclude_value_from_context;
    return invocationResult(identity, {
      success: true,
      message: effect.result_message,
      value,
      excludeValue,
      valueJson: excludeValue || value === null ? null : JSON.stringify(value),
      error: null,
      toolHash: effect.tool_hash,
      replayOf: { effectId: effect.effect_id, ledgerKey: effect.idempotency_key },
    });
  }

  /** An earlier identical run was lost after it started: it may have had its effect, so nothing runs until an admin says. */
  #unknown(call: PipelineCall, lost: UnknownEffect, fresh: boolean): InvocationResult {
    if (fresh) {
      this.#metrics?.ledgerUnknown(lost.tool_name);
      call.scope.sinks.log.warn(
        { ledgerKey: lost.idempotency_key, effectId: lost.effect_id, lostAt: lost.lost_at },
        'a ledger lease lapsed without a record: outcome unknown',
      );
    }
    const result = failure(call.identity, 'outcome_unknown', ...explain.outcomeUnknown(call.tool, lost));
    result.effect_id = lost.effect_id;
    result.lost_at = lost.lost_at;
    return result;
  }

  #inProgress(identity: CallIdentity, tool: RegisteredTool): InvocationResult {
    const message = `An identical call to tool "${tool.name}" is still running and did not finish in time. Retry later: the result will be returned without running the tool again.`;
    return failure(identity, 'in_progress', message, 'an identical call holds the ledger entry');
  }

  #keyed(result: InvocationResult, key: string): InvocationResult {
    result.idempotency_key = key;
    return result;
  }

  /** Best effort: if the store cannot be told, the lease lapses by itself. */
  async #abort(log: Logger, key: string, token: string): Promise<void> {
    try {
      await this.#ledger.abort(key, token);
    } catch (err) {
      log.warn({ err, ledgerKey: key }, 'ledger lease could not be released; it lapses by itself');
    }
  }
}
