/** The embedded store: one process, state in a Map, expiry checked on access and swept now and then. */
import { MemoryLedger } from '../ledger/memory.ts';
import type { SessionCommit, Store, StoreOptions } from './types.ts';

interface SessionEntry {
  state: Map<string, string>;
  events: string[];
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly #sessions = new Map<string, SessionEntry>();
  readonly #options: StoreOptions;
  readonly #sweeper: NodeJS.Timeout;
  readonly ledger = new MemoryLedger();

  constructor(options: StoreOptions) {
    this.#options = options;
    this.#sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();
  }

  assertAvailable(): void {}

  async ping(): Promise<void> {}

  #live(sessionId: string): SessionEntry | undefined {
    const entry = this.#sessions.get(sessionId);
    if (entry !== undefined && entry.expiresAt <= Date.now()) {
      this.#sessions.delete(sessionId);
      return undefined;
    }
    return entry;
  }

  async sessionGet(sessionId: string, key: string): Promise<string | null> {
    return this.#live(sessionId)?.state.get(key) ?? null;
  }

  async commitSession(sessionId: string, commit: SessionCommit): Promise<void> {
    let entry = this.#live(sessionId);
    if (entry === undefined) {
      entry = { state: new Map(), events: [], expiresAt: 0 };
      this.#sessions.set(sessionId, entry);
    }
    for (const [key, value] of commit.writes) entry.state.set(key, value);
    entry.events.push(commit.event);
    // Trimmed in batches, so a full log costs O(1) per event rather than a shift of every entry.
    const max = this.#options.sessionMaxEvents;
    if (entry.events.length >= 2 * max) entry.events.splice(0, entry.events.length - max);
    entry.expiresAt = Date.now() + this.#options.sessionTtlS * 1000;
  }

  async sessionEvents(sessionId: string): Promise<string[]> {
    return (this.#live(sessionId)?.events ?? []).slice(-this.#options.sessionMaxEvents);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#sessions) if (entry.expiresAt <= now) this.#sessions.delete(id);
    this.ledger.prune();
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }
}
