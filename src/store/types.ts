/** The one interface the runtime keeps its state behind; memory.ts and redis.ts behave the same. */
import type { EffectLedger } from '../ledger/types.ts';

export class StoreUnavailableError extends Error {
  override name = 'StoreUnavailableError';
}

export interface StoreOptions {
  readonly keyPrefix: string;
  /** Session lifetime after its last write. */
  readonly sessionTtlS: number;
  /** The newest events a session keeps. */
  readonly sessionMaxEvents: number;
}

/** A handler's staged session writes (values as JSON text) and the call's ToolInvoked event. */
export interface SessionCommit {
  readonly writes: ReadonlyMap<string, string>;
  readonly event: string;
}

export interface Store {
  readonly kind: 'memory' | 'redis';
  /** Throws StoreUnavailableError at once, without a round trip, when the store is known to be down. */
  assertAvailable(): void;
  /** A round trip; throws StoreUnavailableError when the store does not answer in time. */
  ping(): Promise<void>;
  sessionGet(sessionId: string, key: string): Promise<string | null>;
  /** Applies the writes and appends the event in one atomic step, refreshing the session's TTL. */
  commitSession(sessionId: string, commit: SessionCommit): Promise<void>;
  /** The session's events, oldest first (JSON text). */
  sessionEvents(sessionId: string): Promise<string[]>;
  close(): Promise<void>;
  /** The effect ledger (SPEC §5), kept in the same store. */
  readonly ledger: EffectLedger;
}
