/**
 * The approval store (docs/approvals.md): durable approval records, kept by every backend
 * (store/memory/approvals.ts, store/redis/approvals.ts) with the same behaviour. It knows nothing of
 * tools: a record is JSON made by src/policy/; the store keeps it beside its status and guards every
 * change of status with a compare-and-set, so one decision and one run win across replicas.
 */

export type ApprovalStatus = 'pending' | 'approved' | 'denied' | 'expired' | 'executed';

export interface NewApproval {
  readonly id: string;
  /** JSON of the whole record, status `pending`. */
  readonly json: string;
  /** Epoch ms: not decided by then, it expires. */
  readonly expiresAt: number;
  /** How long the record (and its binding) is kept from now: past its expiry, so outcomes can be read and replayed. */
  readonly keepMs: number;
}

/** How a change of status is guarded beside the status itself. */
export type ExpiryGuard = 'live' | 'lapsed' | 'any';

/**
 * 'ok'; or what stood in the way: the record's current status, 'expired' (a live change on a
 * pending record past its expiry), or 'missing'.
 */
export type MoveOutcome = 'ok' | ApprovalStatus | 'missing';

export interface ApprovalStore {
  /**
   * The record the binding (caller, session, tool hash, arguments hash) points to, or else `fresh`
   * kept under it: one atomic step, so identical calls join one approval.
   */
  open(binding: string, fresh: NewApproval): Promise<{ json: string; created: boolean }>;
  get(id: string): Promise<{ json: string; status: ApprovalStatus } | null>;
  /**
   * Compare-and-set: status `from` becomes `to` with the new JSON. `live`: only before the expiry;
   * `lapsed`: only after it; `any`: whenever.
   */
  move(id: string, from: ApprovalStatus, to: ApprovalStatus, json: string, guard: ExpiryGuard): Promise<MoveOutcome>;
  /** An approved record becomes `runner`'s to run for `leaseMs`: false when another runner holds a live lease or it is not approved. */
  claim(id: string, runner: string, leaseMs: number): Promise<boolean>;
  /** `runner`'s approved record becomes `executed` with the new JSON; false when it was not this runner's. */
  complete(id: string, runner: string, json: string): Promise<boolean>;
  /** The binding stops pointing to `id` (a denied or expired outcome was reported): the next identical call asks anew. */
  release(binding: string, id: string): Promise<void>;
  /**
   * Ids of approvals whose expiry has passed while pending, at most `limit`, each handed out once
   * (to one replica's sweep): reading one records its expiry. Every replica sweeps, so an approval
   * expires on time whichever replica made it.
   */
  due(limit: number): Promise<string[]>;
  /** The newest records (JSON), newest first. */
  recent(limit: number): Promise<string[]>;
  /** True the first time `token` is used within `ttlMs` (a sealed MCP request state); false after. */
  useOnce(token: string, ttlMs: number): Promise<boolean>;
  /** One random secret shared by every replica (made by the first that asks): the key that seals MCP request states. */
  sharedSecret(): Promise<string>;
}
