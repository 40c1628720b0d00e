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

export type BeginOutcome =
  /** The caller holds the lease: run the handler, then complete or abort with this token. */
  | { kind: 'run'; token: string }
  | { kind: 'replay'; effect: ToolEffect }
  /** Another call holds the lease; it lapses in `leaseLeftMs` unless renewed. */
  | { kind: 'in_progress'; leaseLeftMs: number }
  /** Only when the payload must match (Idempotency-Key): the key is taken by other arguments. */
  | { kind: 'mismatch' };

export interface BeginRequest extends EntryLabels {
  key: string;
  /** Made by the caller, so a repeated begin (a re-sent command) is recognised as the same call. */
  token: string;
  leaseMs: number;
  /** Refuse another payload under this key (Idempotency-Key) instead of replaying it. */
  strictPayload: boolean;
  /** The lease must be held by the store's replicas before the handler runs (StoreNotDurable otherwise). */
  durable?: boolean;
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
}
