/** The embedded store: one process, state in a Map, expiry checked on access and swept now and then. */
import { MemoryCallLog } from './calls.ts';
import { MemoryLedger } from './ledger.ts';
import { MemoryTaskStore } from './tasks.ts';
import { MemoryResults } from './results.ts';
import { MemoryCredentials } from './credentials.ts';
import { MemoryApprovals } from './approvals.ts';
import { MemoryMcpClients } from './mcp-clients.ts';
import { MemoryAuditLog } from './audit.ts';
import {
  AUDIT_TTL_MS,
  RECENT_CALLS,
  type DefinitionRecord,
  type EventPage,
  type SessionCommit,
  type SessionRead,
  type Store,
  type StoreBackend,
  type StoreOptions,
  type ToolPin,
} from '../types.ts';
import { liveEntry } from './expiry.ts';

interface SessionEntry {
  state: Map<string, string>;
  versions: Map<string, number>;
  events: string[];
  /** Events ever appended; the newest `events.length` of them are kept. */
  total: number;
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/** The fallback backend: chosen when no other is configured. */
export const memoryBackend: StoreBackend = {
  selected: () => true,
  open: async (_config, options) => new MemoryStore(options),
};

export class MemoryStore implements Store {
  readonly kind = 'memory';
  /** Rate limits count in this process. */
  readonly rateCounter = null;
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #definitions = new Map<string, { definition: string; firstServedAt: number }>();
  readonly #versions = new Map<string, { hash: string; firstServedAt: number }[]>();
  readonly #pins = new Map<string, ToolPin>();
  readonly #options: StoreOptions;
  readonly #sweeper: NodeJS.Timeout;
  readonly ledger = new MemoryLedger();
  readonly tasks = new MemoryTaskStore();
  readonly calls: MemoryCallLog;
  readonly results = new MemoryResults();
  readonly credentials = new MemoryCredentials();
  readonly approvals = new MemoryApprovals();
  readonly mcpClients = new MemoryMcpClients();
  readonly audit: MemoryAuditLog;

  constructor(options: StoreOptions) {
    this.#options = options;
    this.calls = new MemoryCallLog(options.recentCalls ?? RECENT_CALLS);
    this.audit = new MemoryAuditLog(options.auditTtlMs ?? AUDIT_TTL_MS);
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();
  }

  assertAvailable(): void {}

  async ping(): Promise<void> {}

  #live(sessionId: string): SessionEntry | undefined {
    return liveEntry(this.#sessions, sessionId, (entry) => entry.expiresAt);
  }

  async sessionRead(sessionId: string, keys: readonly string[]): Promise<SessionRead> {
    const entry = this.#live(sessionId);
    return {
      values: keys.map((key) => entry?.state.get(key) ?? null),
      versions: keys.map((key) => entry?.versions.get(key) ?? 0),
    };
  }

  async commitSession(sessionId: string, commit: SessionCommit): Promise<boolean> {
    let entry = this.#live(sessionId);
    for (const [key, version] of commit.reads) if ((entry?.versions.get(key) ?? 0) !== version) return false;
    if (entry === undefined) {
      entry = { state: new Map(), versions: new Map(), events: [], total: 0, expiresAt: 0 };
      this.#sessions.set(sessionId, entry);
    }
    for (const [key, value] of commit.writes) {
      if (value === null) entry.state.delete(key);
      else entry.state.set(key, value);
      entry.versions.set(key, (entry.versions.get(key) ?? 0) + 1);
    }
    entry.events.push(commit.event);
    entry.total += 1;
    // Trimmed in batches, so a full log costs O(1) per event rather than a shift of every entry.
    const max = this.#options.sessionMaxEvents;
    if (entry.events.length >= 2 * max) entry.events.splice(0, entry.events.length - max);
    entry.expiresAt = Date.now() + this.#options.sessionTtlS * 1000;
    return true;
  }

  async sessionEvents(sessionId: string, since: number | 'newest', limit: number): Promise<EventPage> {
    const entry = this.#live(sessionId);
    const after = since === 'newest' ? Math.max(0, (entry?.total ?? 0) - limit) : since;
    if (entry === undefined) return { events: [], firstSeq: Math.max(after + 1, 1), total: 0 };
    const kept = Math.min(entry.events.length, this.#options.sessionMaxEvents);
    const first = entry.total - kept + 1;
    const start = Math.max(after + 1, first);
    const from = entry.events.length - kept + (start - first);
    return { events: entry.events.slice(from, from + limit), firstSeq: start, total: entry.total };
  }

  async deleteSession(sessionId: string): Promise<boolean> {
    const existed = this.#live(sessionId) !== undefined;
    this.#sessions.delete(sessionId);
    return existed;
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) if (entry.expiresAt <= now) this.#sessions.delete(id);
    this.ledger.prune();
    this.results.prune();
    this.credentials.prune();
    this.approvals.prune();
    this.mcpClients.prune();
  }

  async recordDefinitions(records: readonly DefinitionRecord[], at: number): Promise<void> {
    for (const { hash, name, definition } of records) {
      if (this.#definitions.has(hash)) continue;
      this.#definitions.set(hash, { definition, firstServedAt: at });
      this.#versions.set(name, [...(this.#versions.get(name) ?? []), { hash, firstServedAt: at }]);
    }
  }

  async definitionByHash(hash: string): Promise<{ definition: string; firstServedAt: number } | null> {
    return this.#definitions.get(hash) ?? null;
  }

  async definitionVersions(name: string): Promise<{ hash: string; firstServedAt: number }[]> {
    return [...(this.#versions.get(name) ?? [])];
  }

  async pinSeen(name: string, hash: string): Promise<ToolPin> {
    const current = this.#pins.get(name)?.current ?? hash;
    const pin = { current, pending: current === hash ? null : hash };
    this.#pins.set(name, pin);
    return pin;
  }

  async pinAccept(name: string, hash: string): Promise<ToolPin> {
    const pin = { current: hash, pending: null };
    this.#pins.set(name, pin);
    return pin;
  }

  async toolPin(name: string): Promise<ToolPin | null> {
    return this.#pins.get(name) ?? null;
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await this.tasks.close();
    await this.calls.close();
  }
}
