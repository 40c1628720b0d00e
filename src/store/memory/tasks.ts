/**
 * Tasks in one process: records in a Map, expiry checked on access and swept now and then, signals
 * told to this process's listeners. Leases and the queue behave as in Redis, so the same runner code
 * drives both.
 */
import type {
  ClaimedTask,
  EndStatus,
  LapseOutcomes,
  NewTask,
  TakeOver,
  TaskListScope,
  TaskPage,
  TaskRecord,
  TaskSignal,
  TaskStatus,
  TaskStore,
} from '../tasks.ts';
import { liveEntry } from './expiry.ts';

interface Entry {
  id: string;
  owner: string | null;
  head: string;
  job: string;
  rerunnable: boolean;
  runner: string | null;
  lease: number;
  keepMs: number;
  attempts: number;
  status: TaskStatus;
  updatedAt: number;
  progress: string | null;
  outcome: string | null;
  cancel: boolean;
  input: string | null;
  expiresAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

function recordOf(entry: Entry): TaskRecord {
  const { id, owner, head, status, updatedAt, progress, outcome, attempts, input } = entry;
  return { id, owner, head, status, updatedAt, progress, outcome, attempts, queued: status === 'working' && entry.runner === null, input };
}

export class MemoryTaskStore implements TaskStore {
  readonly #tasks = new Map<string, Entry>();
  /** Ids of the tasks waiting for a slot (ids sort by age). */
  readonly #queue = new Set<string>();
  readonly #listeners: ((signal: TaskSignal, id: string) => void)[] = [];
  readonly #sweeper = setInterval(() => this.#sweep(), SWEEP_INTERVAL_MS).unref();

  #live(id: string): Entry | undefined {
    return liveEntry(this.#tasks, id, (entry) => entry.expiresAt);
  }

  #sweep(): void {
    const now = Date.now();
    for (const [id, entry] of this.#tasks) {
      if (entry.expiresAt > now) continue;
      this.#tasks.delete(id);
      this.#queue.delete(id);
    }
  }

  #signal(signal: TaskSignal, id: string): void {
    // Told after the caller's step has finished, as a Redis message would arrive.
    queueMicrotask(() => {
      for (const listener of this.#listeners) listener(signal, id);
    });
  }

  #end(entry: Entry, status: EndStatus, outcome: string, ttlMs: number): void {
    const now = Date.now();
    Object.assign(entry, { status, outcome, updatedAt: now, expiresAt: now + ttlMs, job: '', runner: null, input: null });
    this.#queue.delete(entry.id);
    this.#signal('ended', entry.id);
  }

  #enqueue(entry: Entry): void {
    Object.assign(entry, { runner: null, lease: Infinity });
    this.#queue.add(entry.id);
    this.#signal('queued', entry.id);
  }

  async create(task: NewTask): Promise<void> {
    const now = Date.now();
    const entry: Entry = {
      id: task.id,
      owner: task.owner,
      head: task.head,
      job: task.job,
      rerunnable: task.rerunnable,
      runner: task.runner,
      lease: now + task.leaseMs,
      keepMs: task.keepMs,
      attempts: task.runner === null ? 0 : 1,
      status: 'working',
      updatedAt: now,
      progress: null,
      outcome: null,
      cancel: false,
      input: null,
      expiresAt: now + task.keepMs,
    };
    this.#tasks.set(task.id, entry);
    if (task.runner === null) this.#enqueue(entry);
  }

  async get(id: string): Promise<TaskRecord | null> {
    const entry = this.#live(id);
    return entry === undefined ? null : recordOf(entry);
  }

  async renew(id: string, runner: string, leaseMs: number): Promise<'ok' | 'cancel' | 'lost'> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'working' || entry.runner !== runner) return 'lost';
    entry.lease = Date.now() + leaseMs;
    return entry.cancel ? 'cancel' : 'ok';
  }

  async progress(id: string, runner: string, progress: string): Promise<void> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'working' || entry.runner !== runner) return;
    entry.progress = progress;
    entry.updatedAt = Date.now();
  }

  async finish(id: string, runner: string, status: EndStatus, outcome: string, ttlMs: number): Promise<boolean> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'working' || entry.runner !== runner) return false;
    this.#end(entry, status, outcome, ttlMs);
    return true;
  }

  async requestCancel(id: string, outcome: string, ttlMs: number): Promise<boolean> {
    const entry = this.#live(id);
    if (entry === undefined || (entry.status !== 'working' && entry.status !== 'input_required')) return false;
    if (entry.runner === null) this.#end(entry, 'cancelled', outcome, ttlMs);
    else {
      entry.cancel = true;
      this.#signal('cancel', id);
    }
    return true;
  }

  async hold(id: string, runner: string, input: string, keepMs: number): Promise<boolean> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'working' || entry.runner !== runner) return false;
    const now = Date.now();
    Object.assign(entry, { status: 'input_required', input, runner: null, lease: Infinity, cancel: false, updatedAt: now, expiresAt: now + keepMs });
    this.#signal('input', id);
    return true;
  }

  async resume(id: string, job: string | null): Promise<boolean> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'input_required') return false;
    const now = Date.now();
    Object.assign(entry, { status: 'working', input: null, updatedAt: now, expiresAt: now + entry.keepMs });
    if (job !== null) entry.job = job;
    this.#enqueue(entry);
    return true;
  }

  async job(id: string): Promise<string | null> {
    const entry = this.#live(id);
    return entry === undefined || (entry.status !== 'working' && entry.status !== 'input_required') ? null : entry.job;
  }

  async claim(runner: string, leaseMs: number): Promise<ClaimedTask | null> {
    for (;;) {
      let oldest: string | undefined;
      for (const id of this.#queue) if (oldest === undefined || id < oldest) oldest = id;
      if (oldest === undefined) return null;
      this.#queue.delete(oldest);
      const entry = this.#live(oldest);
      if (entry === undefined || entry.status !== 'working' || entry.runner !== null) continue;
      const now = Date.now();
      Object.assign(entry, { runner, lease: now + leaseMs, updatedAt: now, expiresAt: now + entry.keepMs });
      entry.attempts += 1;
      return { id: entry.id, job: entry.job };
    }
  }

  async lapsed(limit: number): Promise<string[]> {
    const now = Date.now();
    const ids: string[] = [];
    for (const entry of this.#tasks.values()) {
      if (ids.length >= limit) break;
      if (entry.status === 'working' && entry.runner !== null && entry.lease <= now && entry.expiresAt > now) ids.push(entry.id);
    }
    return ids;
  }

  async takeOver(id: string, maxAttempts: number, ttlMs: number, outcomes: LapseOutcomes): Promise<TakeOver> {
    const entry = this.#live(id);
    if (entry === undefined || entry.status !== 'working') return 'ended';
    if (entry.runner === null || entry.lease > Date.now()) return 'alive';
    if (entry.cancel) this.#end(entry, 'cancelled', outcomes.cancelled, ttlMs);
    else if (!entry.rerunnable) this.#end(entry, 'failed', outcomes.lost, ttlMs);
    else if (entry.attempts >= maxAttempts) this.#end(entry, 'failed', outcomes.exhausted, ttlMs);
    else {
      entry.updatedAt = Date.now();
      this.#enqueue(entry);
      return 'queued';
    }
    return 'ended';
  }

  async list(scope: TaskListScope, after: string | null, limit: number): Promise<TaskPage> {
    const now = Date.now();
    const ids = [...this.#tasks.values()]
      .filter((e) => e.expiresAt > now && (scope === 'all' || e.owner === scope.owner) && (after === null || e.id < after))
      .map((e) => e.id)
      .sort()
      .reverse();
    const page = ids.slice(0, limit);
    return { records: page.map((id) => recordOf(this.#tasks.get(id)!)), next: ids.length > limit ? page[page.length - 1]! : null };
  }

  async onSignal(listener: (signal: TaskSignal, id: string) => void): Promise<void> {
    this.#listeners.push(listener);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#listeners.length = 0;
  }
}
