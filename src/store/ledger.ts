/**
 * The effect ledger (docs/ledger.md): one entry per idempotency key, first an in-progress lease held by
 * one call (named by a fencing token), then the recorded result of a success. Every backend's
 * ledger (memory/ledger.ts, redis/ledger.ts) behaves the same; the Redis one holds across processes.
 */

/** A recorded success (docs/ledger.md), plus what a replay needs to answer like the original. */
export interface ToolEffect {
  effect_id: string;
  idempotency_key: string;
  tool_name: string;
  params_hash: string;
  result_message: string;
  result_value: unknown;
  result_success: boolean;
  created_at: string;
  expires_at: string | null;
  /** Not in the seed's record: a replay must hide the value from the model as the original did. */
  exclude_value_from_context: boolean;
  /** The definition that produced the result. */
  tool_hash: string;
}

/** What the ledger needs to know about an entry beyond its key. */
export interface EntryLabels {
  tool: string;
  /** `global`, `session:<id>` or `key:<api key id>`. */
  scope: string;
  /** SHA-256 of the canonical JSON of all the arguments. */
  paramsHash: string;
}

/**
 * What the next identical call does after a lease lapsed without a record (its runner died, or a
 * failover lost the record): run again, or answer `outcome_unknown` until an admin resolves it.
 */
export type OnLost = 'rerun' | 'unknown';

/** A lapsed lease whose effect may or may not have happened (docs/ledger.md). */
export interface UnknownEffect {
  idempotency_key: string;
  tool_name: string;
  scope: string;
  /** The id the lost run's record would have had. */
  effect_id: string;
  /** When the lost run started (ISO 8601). */
  lost_at: string;
}

export type BeginOutcome =
  /** The caller holds the lease: run the handler, then complete or abort with this token. */
  | { kind: 'run'; token: string }
  | { kind: 'replay'; effect: ToolEffect }
  /** Another call holds the lease; it lapses in `leaseLeftMs` unless renewed. */
  | { kind: 'in_progress'; leaseLeftMs: number }
  /** Only when the payload must match (Idempotency-Key): the key is taken by other arguments. */
  | { kind: 'mismatch' }
  /** A lease of an `unknown` tool lapsed without a record; `fresh`: this begin found it lapsed (it is counted once). */
  | { kind: 'unknown'; lost: UnknownEffect; fresh: boolean };

export interface BeginRequest extends EntryLabels {
  key: string;
  /** Made by the caller, so a repeated begin (a re-sent command) is recognised as the same call. */
  token: string;
  leaseMs: number;
  /** Refuse another payload under this key (Idempotency-Key) instead of replaying it. */
  strictPayload: boolean;
  /** The lease must be held by the store's replicas before the handler runs (StoreNotDurable otherwise). */
  durable?: boolean;
  /** What a lapse of this lease means; `unknown` keeps the entry after the lease until it is resolved. */
  onLost?: OnLost;
  /** The id the record will have, kept in the lease so an unknown outcome names it. */
  effectId?: string;
  /** How long an `unknown` lease's entry is kept (the record's TTL); null: until resolved. */
  keepS?: number | null;
}

/** What an admin says a lost run answered. */
export interface ResolvedResult {
  message: string;
  value: unknown;
  exclude_value_from_context: boolean;
}

/** The tool's definition hash and record TTL, by its name (the entry names its tool). */
export type ToolRecordInfo = (tool: string) => { hash: string; ttlS: number | null };

/** An admin's word on an unknown outcome: it ran (and this is what it answered), or it did not. */
export type Resolution = { outcome: 'ran'; result: ResolvedResult; toolInfo: ToolRecordInfo } | { outcome: 'not_ran' };

/** A success as the ledger records it, under `effectId`, kept `ttlS` seconds (null: until resolved away). */
export function effectRecord(
  effectId: string,
  key: string,
  entry: { tool: string; paramsHash: string; toolHash: string },
  result: ResolvedResult,
  ttlS: number | null,
): ToolEffect {
  const now = Date.now();
  return {
    effect_id: effectId,
    idempotency_key: key,
    tool_name: entry.tool,
    params_hash: entry.paramsHash,
    result_message: result.message,
    result_value: result.value,
    result_success: true,
    created_at: new Date(now).toISOString(),
    expires_at: ttlS === null ? null : new Date(now + ttlS * 1000).toISOString(),
    exclude_value_from_context: result.exclude_value_from_context,
    tool_hash: entry.toolHash,
  };
}

/** The record of a lost run an admin says ran: under the lost run's effect id, so a replay names it. */
export function resolvedEffect(
  key: string,
  lost: { effectId: string; tool: string; paramsHash: string },
  result: ResolvedResult,
  toolInfo: ToolRecordInfo,
): { effect: ToolEffect; ttlS: number | null } {
  const { hash, ttlS } = toolInfo(lost.tool);
  return { effect: effectRecord(lost.effectId, key, { tool: lost.tool, paramsHash: lost.paramsHash, toolHash: hash }, result, ttlS), ttlS };
}

export interface EffectLedger {
  /** One atomic step: take the lease, or report the record, the lease holder, or a payload mismatch. */
  begin(request: BeginRequest): Promise<BeginOutcome>;
  /** Records the success if `token` still holds the lease; false when it lapsed and was taken. */
  complete(labels: EntryLabels, token: string, effect: ToolEffect, ttlS: number | null, durable?: boolean): Promise<boolean>;
  /** Drops the lease if `token` holds it, so the next call runs; records nothing. */
  abort(key: string, token: string): Promise<void>;
  /** Extends the lease while the handler runs; false when it is no longer held by `token`. */
  renew(key: string, token: string, leaseMs: number): Promise<boolean>;
  lookup(key: string): Promise<ToolEffect | null>;
  /** Removes the entry (record or lease); false when there was none. */
  invalidate(key: string): Promise<boolean>;
  /** Removes every entry of one tool; costs in proportion to that tool's entries. */
  invalidateTool(tool: string): Promise<number>;
  /** Removes every entry of one scope; costs in proportion to that scope's entries. */
  clearScope(scope: string): Promise<number>;
  /** Settles an unknown outcome (or a lapsed `unknown` lease); false when the key holds none. */
  resolve(key: string, resolution: Resolution): Promise<boolean>;
  /** The unknown outcomes, oldest first, at most `limit`. */
  unknown(limit: number): Promise<UnknownEffect[]>;
  /**
   * The shared sweep, run by every replica: turns leases of `unknown` tools that lapsed into unknown
   * outcomes; returns those this call turned (each is turned by exactly one sweep or begin).
   */
  sweep(limit: number): Promise<UnknownEffect[]>;
}
