/** The one interface the runtime keeps its state behind; every backend (memory/, redis/) behaves the same. */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { EffectLedger } from './ledger.ts';
import type { TaskStore } from './tasks.ts';
import type { ResultStore } from './results.ts';
import type { CredentialStore } from './credentials.ts';
import type { ApprovalStore } from './approvals.ts';
import type { McpClientStore } from './mcp-clients.ts';
import type { AuditLog } from './audit.ts';

export const AUDIT_TTL_MS = 90 * 86_400_000;

export interface StoreOptions {
  readonly keyPrefix: string;
  /** Session lifetime after its last write. */
  readonly sessionTtlS: number;
  /** The newest events a session keeps. */
  readonly sessionMaxEvents: number;
  /** The newest calls the call log keeps (default RECENT_CALLS). */
  readonly recentCalls?: number;
  /** How long audit entries are kept (AUDIT_TTL_DAYS); default 90 days. */
  readonly auditTtlMs?: number;
}

/** Values of session keys (JSON text, null when absent) and the version each had when read (0 = never written). */
export interface SessionRead {
  readonly values: (string | null)[];
  readonly versions: number[];
}

/**
 * A handler's staged session writes and the call's ToolInvoked event. The writes apply only if
 * every key in `reads` still has the version the handler saw (optimistic concurrency).
 */
export interface SessionCommit {
  readonly reads: ReadonlyMap<string, number>;
  /** New values as JSON text; null deletes the key. */
  readonly writes: ReadonlyMap<string, string | null>;
  readonly event: string;
}

/** A page of a session's events: `events[i]` has sequence number `firstSeq + i`; `total` events were ever logged. */
export interface EventPage {
  readonly events: string[];
  readonly firstSeq: number;
  readonly total: number;
}

/** A tool definition kept for provenance: its hash, its tool's name and the hashed definition as JSON. */
export interface DefinitionRecord {
  readonly hash: string;
  readonly name: string;
  readonly definition: string;
}

/** A pinned tool's accepted definition hash, and the changed upstream hash awaiting an admin (docs/mcp-sources.md). */
export interface ToolPin {
  readonly current: string;
  readonly pending: string | null;
}

export const RECENT_CALLS = 500;

/** One entry of the call log: its JSON text, made when first asked for (and then kept). */
export interface CallLogEntry {
  json(): string;
}

/**
 * The recent calls of every replica (the console's feed): a bounded list, newest first, and a live
 * channel. The memory log keeps the entries it is given as they are, so an entry nobody reads is
 * never serialized; the Redis log writes each entry's JSON text (once) and hands back entries read
 * from Redis as that text.
 */
export interface CallLog {
  /** Appends entries (oldest first), keeps the newest `max`, and tells every subscriber. */
  append(entries: readonly CallLogEntry[]): Promise<void>;
  /** The newest `limit` entries, newest first. */
  recent(limit: number): Promise<CallLogEntry[]>;
  /** Calls `listener` with each batch of entries appended from now on, by any replica; returns the unsubscribe. */
  subscribe(listener: (entries: readonly CallLogEntry[]) => void): () => void;
  close(): Promise<void>;
}

/** An entry read back as JSON text. */
export class CallLogText implements CallLogEntry {
  readonly #text: string;
  constructor(text: string) {
    this.#text = text;
  }
  json(): string {
    return this.#text;
  }
}

/** A request count in a fixed window, and the ms left in that window. */
export interface RateCount {
  readonly current: number;
  readonly ttl: number;
}

/** Counts requests per key in fixed windows, in a place every replica on the same backend shares. */
export interface RateCounter {
  /** Counts one request of `key`; its first request starts a window of `windowMs`. */
  incr(key: string, windowMs: number): Promise<RateCount>;
}

export interface Store {
  /** The backend's name, as /readyz reports it. */
  readonly kind: string;
  /** Throws StoreUnavailable at once, without a round trip, when the store is known to be down. */
  assertAvailable(): void;
  /** A round trip; throws StoreUnavailable when the store does not answer in time. */
  ping(): Promise<void>;
  /** Reads several session keys and their versions in one atomic step. */
  sessionRead(sessionId: string, keys: readonly string[]): Promise<SessionRead>;
  /**
   * Checks the read versions, applies the writes and appends the event in one atomic step, refreshing
   * the session's TTL. Returns false, changing nothing, when a key read has changed since (a conflict).
   */
  commitSession(sessionId: string, commit: SessionCommit): Promise<boolean>;
  /**
   * Events with sequence numbers after `after` (oldest first, at most `limit`) among those still
   * kept; `'newest'`: the newest `limit` events, read with the total in one snapshot.
   */
  sessionEvents(sessionId: string, after: number | 'newest', limit: number): Promise<EventPage>;
  /** Removes the session's state and events; true when there was something to remove. */
  deleteSession(sessionId: string): Promise<boolean>;
  close(): Promise<void>;
  /** Keeps each definition under its hash, in one round trip; a hash already kept keeps its first time. No expiry. */
  recordDefinitions(records: readonly DefinitionRecord[], at: number): Promise<void>;
  definitionByHash(hash: string): Promise<{ definition: string; firstServedAt: number } | null>;
  /** The hashes a tool name has had, oldest first. */
  definitionVersions(name: string): Promise<{ hash: string; firstServedAt: number }[]>;
  /**
   * An upstream serves `hash` for a pinned tool: the first hash seen becomes the pin; another
   * becomes pending (the pin stays); the pinned one again clears pending. One atomic step.
   */
  pinSeen(name: string, hash: string): Promise<ToolPin>;
  /** Makes `hash` the pin and clears pending (an admin accepted the change). */
  pinAccept(name: string, hash: string): Promise<ToolPin>;
  /** The tool's pin; null when it is not pinned. */
  toolPin(name: string): Promise<ToolPin | null>;
  /** The effect ledger (docs/ledger.md), kept in the same store. */
  readonly ledger: EffectLedger;
  /** Long-running calls (docs/tasks.md), kept in the same store; closed with it. */
  readonly tasks: TaskStore;
  /** The recent calls, for the console (docs/console.md). */
  readonly calls: CallLog;
  /** Large results (docs/large-results.md), kept in the same store. */
  readonly results: ResultStore;
  /** Users' credentials, sealed (docs/credentials.md), kept in the same store. */
  readonly credentials: CredentialStore;
  /** Approvals of held calls (docs/approvals.md), kept in the same store. */
  readonly approvals: ApprovalStore;
  /** Where the rate limiter counts, shared by all replicas; null: each process counts for itself. */
  readonly rateCounter: RateCounter | null;
  /** What MCP clients declared when they connected, per MCP session. */
  readonly mcpClients: McpClientStore;
  /** The audit log's chain (docs/audit.md), shared by every replica on this store. */
  readonly audit: AuditLog;
}

/** One kind of store: whether the configuration selects it, and how to open it (src/store/index.ts lists them). */
export interface StoreBackend {
  selected(config: Config): boolean;
  open(config: Config, options: StoreOptions, log: Logger): Promise<Store>;
}
