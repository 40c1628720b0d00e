/**
 * The audit log's store (docs/audit.md): one chain of entries for every replica on the same store.
 * The store numbers each entry and links it to the one before it, atomically, so replicas appending
 * at once still make one chain: `hash = sha1(prev + "\n" + body)`, where `body` is the entry's JSON
 * text as the service wrote it and `prev` the hash of the entry before ("" for the first ever).
 */
import { hash } from 'node:crypto';

/** An entry as kept: its number in the chain, its link and its body (JSON text). */
export interface StoredAuditEntry {
  readonly seq: number;
  readonly prev: string;
  readonly hash: string;
  readonly body: string;
}

/** An entry's body, made when its batch is appended (off the call's path), once. */
export interface AuditBody {
  text(): string;
}

export interface AuditLog {
  /**
   * Appends the bodies in order (one round trip), drops entries past the retention, and answers them
   * as kept. The memory store links them when they are first read (their `hash` is computed then),
   * or at once when `linked` asks for the answer's hashes.
   */
  append(bodies: readonly AuditBody[], linked?: boolean): Promise<StoredAuditEntry[]>;
  /** Entries with seq below `before` (null: the newest), newest first, at most `limit`. */
  newest(before: number | null, limit: number): Promise<StoredAuditEntry[]>;
  /** Entries with seq above `after` (0: from the oldest kept), oldest first, at most `limit`. */
  oldest(after: number, limit: number): Promise<StoredAuditEntry[]>;
}

/** The link of an entry: what `hash` must be for this `prev` and `body` (SHA-1: what Redis scripts compute). */
export function auditHash(prev: string, body: string): string {
  return hash('sha1', `${prev}\n${body}`, 'hex'); // one-shot: no Hash object per entry
}

/** An entry as one JSON object: its seq, prev and hash, then the body's own members (body text kept exact). */
export function auditJson(entry: StoredAuditEntry): string {
  const rest = entry.body.length > 2 ? `,${entry.body.slice(1)}` : '}';
  return `{"seq":${entry.seq},"prev":"${entry.prev}","hash":"${entry.hash}"${rest}`;
}

/** The body text of an entry written by auditJson (JSON.stringify gives back the text it was parsed from). */
export function auditBodyOf(line: Record<string, unknown>): string {
  const { seq: _seq, prev: _prev, hash: _hash, ...body } = line;
  return JSON.stringify(body);
}

/** What happened, as a part of the service reports it to the audit log (src/audit/ writes it). */
export interface AuditEvent {
  readonly kind: 'call' | 'policy' | 'guardrail' | 'approval' | 'credential' | 'admin';
  /** Who: the API key or signed-in caller, the person, and whose request or credential it acted on. */
  readonly caller: string | null;
  readonly user?: string | null;
  readonly onBehalfOf?: string | null;
  readonly tool?: string | null;
  readonly toolHash?: string | null;
  /** The call's arguments: hashed into the entry, kept whole only with AUDIT_ARGUMENTS=true. */
  readonly arguments?: unknown;
  readonly approvalId?: string | null;
  readonly rule?: string | null;
  /** `success` or an error code for a call; `approved`, `connected`, an HTTP status… for the rest. */
  readonly outcome: string;
  readonly callId?: string | null;
  readonly requestId?: string | null;
  /** What was acted on when no tool names it: a credential's name, an admin route. */
  readonly detail?: string | null;
}

/** Where the parts that decide (approvals, the vault, the admin routes) report; never throws, never waits. */
export interface AuditSink {
  record(event: AuditEvent): void;
}
