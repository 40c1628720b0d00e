/**
 * Tasks in Redis: one hash per task, a sorted set of runners' leases and per-owner listings, all
 * under the one hash tag `{tasks}` so every script runs on Redis Cluster (tasks are long calls, few
 * next to ordinary calls: one slot holds them). Every state change is a Lua script beside this file
 * (lua/task*.lua) timed by the store's own clock; signals travel by pub/sub on one channel.
 */
import { readFileSync } from 'node:fs';
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CommandGuard } from './ledger.ts';
import type { EndStatus, LapseOutcomes, NewTask, TakeOver, TaskListScope, TaskPage, TaskRecord, TaskSignal, TaskStatus, TaskStore } from '../tasks.ts';

const script = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');
const now = script('includes/taskNow');
const end = script('includes/taskEnd');

/** Command name → [number of keys, Lua]. */
const SCRIPTS: Record<string, [number, string]> = {
  taskCreate: [4, now + script('taskCreate')],
  taskRenew: [2, now + script('taskRenew')],
  taskProgress: [1, now + script('taskProgress')],
  taskFinish: [2, now + end + script('taskFinish')],
  taskCancel: [1, script('taskCancel')],
  taskLapsed: [1, now + script('taskLapsed')],
  taskTakeOver: [2, now + end + script('taskTakeOver')],
};

type Arg = string | number;
type TaskClient = (Redis | Cluster) & {
  taskCreate(task: string, leases: string, ownerIndex: string, allIndex: string, ...args: Arg[]): Promise<number>;
  taskRenew(task: string, leases: string, ...args: Arg[]): Promise<'ok' | 'cancel' | 'lost'>;
  taskProgress(task: string, ...args: Arg[]): Promise<number>;
  taskFinish(task: string, leases: string, ...args: Arg[]): Promise<number>;
  taskCancel(task: string, ...args: Arg[]): Promise<number>;
  taskLapsed(leases: string, limit: number): Promise<string[]>;
  taskTakeOver(task: string, leases: string, ...args: Arg[]): Promise<[string, string?]>;
};

const FIELDS = ['owner', 'head', 'status', 'updated', 'progress', 'outcome'] as const;
/** How long a listing index lives after its newest task was added (the longest a task can be kept). */
const INDEX_LIFE_MS = 400 * 86_400_000;

export class RedisTaskStore implements TaskStore {
  readonly #client: TaskClient;
  readonly #prefix: string;
  readonly #channel: string;
  readonly #run: CommandGuard;
  readonly #log: Logger;
  #subscriber: Redis | Cluster | null = null;
  readonly #listeners: ((signal: TaskSignal, id: string) => void)[] = [];

  /** `guard` runs a command, turning connection failures into the store's own error (503 at the edge). */
  constructor(client: Redis | Cluster, keyPrefix: string, guard: CommandGuard, log: Logger) {
    for (const [name, [numberOfKeys, lua]] of Object.entries(SCRIPTS)) client.defineCommand(name, { numberOfKeys, lua });
    this.#client = client as TaskClient;
    this.#prefix = `${keyPrefix}{tasks}:`;
    this.#channel = `${keyPrefix}tasks:signals`;
    this.#run = guard;
    this.#log = log;
  }

  #task(id: string): string {
    return `${this.#prefix}task:${id}`;
  }

  get #leases(): string {
    return `${this.#prefix}leases`;
  }

  #index(scope: TaskListScope): string {
    return scope === 'all' ? `${this.#prefix}all` : `${this.#prefix}owner:${scope.owner ?? ''}`;
  }

  async create(task: NewTask): Promise<void> {
    const keys = [this.#task(task.id), this.#leases, this.#index({ owner: task.owner }), this.#index('all')] as const;
    await this.#run(() =>
      this.#client.taskCreate(...keys, task.id, task.owner ?? '', task.head, task.job, task.rerunnable ? '1' : '0', task.runner, task.leaseMs, task.keepMs, INDEX_LIFE_MS),
    );
  }

  async get(id: string): Promise<TaskRecord | null> {
    const values = await this.#run(() => this.#client.hmget(this.#task(id), ...FIELDS));
    return recordOf(id, values);
  }

  renew(id: string, runner: string, leaseMs: number): Promise<'ok' | 'cancel' | 'lost'> {
    return this.#run(() => this.#client.taskRenew(this.#task(id), this.#leases, id, runner, leaseMs));
  }

  async progress(id: string, runner: string, progress: string): Promise<void> {
    await this.#run(() => this.#client.taskProgress(this.#task(id), runner, progress));
  }

  async finish(id: string, runner: string, status: EndStatus, outcome: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(() => this.#client.taskFinish(this.#task(id), this.#leases, id, runner, status, outcome, ttlMs, this.#channel))) === 1;
  }

  async requestCancel(id: string): Promise<boolean> {
    return (await this.#run(() => this.#client.taskCancel(this.#task(id), id, this.#channel))) === 1;
  }

  lapsed(limit: number): Promise<string[]> {
    return this.#run(() => this.#client.taskLapsed(this.#leases, limit));
  }

  async takeOver(id: string, runner: string, leaseMs: number, ttlMs: number, outcomes: LapseOutcomes): Promise<TakeOver> {
    const [kind, job] = await this.#run(() =>
      this.#client.taskTakeOver(this.#task(id), this.#leases, id, runner, leaseMs, ttlMs, this.#channel, outcomes.lost, outcomes.cancelled),
    );
    if (kind === 'run') return { kind, job: job! };
    return { kind: kind === 'alive' ? 'alive' : 'ended' };
  }

  async list(scope: TaskListScope, after: string | null, limit: number): Promise<TaskPage> {
    const index = this.#index(scope);
    // One more than asked: whether there is a next page. Expired tasks are dropped from the index here.
    const ids = await this.#run(() => this.#client.zrevrangebylex(index, after === null ? '+' : `(${after}`, '-', 'LIMIT', 0, limit + 1));
    const page = ids.slice(0, limit);
    const rows = await this.#run(() => Promise.all(page.map((id) => this.#client.hmget(this.#task(id), ...FIELDS))));
    const records: TaskRecord[] = [];
    const gone: string[] = [];
    rows.forEach((values, i) => {
      const record = recordOf(page[i]!, values);
      if (record === null) gone.push(page[i]!);
      else records.push(record);
    });
    if (gone.length > 0) await this.#run(() => this.#client.zrem(index, ...gone));
    return { records, next: ids.length > limit ? page[page.length - 1]! : null };
  }

  onSignal(listener: (signal: TaskSignal, id: string) => void): void {
    this.#listeners.push(listener);
    if (this.#subscriber !== null) return;
    // A connection of its own: a subscribed connection serves nothing else. It subscribes on every
    // (re)connection; a message missed meanwhile is covered by the runners' polling.
    const subscriber = (this.#subscriber = this.#client instanceof Cluster ? this.#client.duplicate() : (this.#client as Redis).duplicate());
    subscriber.on('error', (err: Error) => this.#log.debug({ err: err.message }, 'the task signal connection failed'));
    subscriber.on('ready', () => {
      subscriber.subscribe(this.#channel).catch((err: unknown) => this.#log.warn({ err }, 'could not subscribe to task signals'));
    });
    subscriber.on('message', (_channel: string, message: string) => {
      const colon = message.indexOf(':');
      const signal = message.slice(0, colon);
      if (signal !== 'ended' && signal !== 'cancel') return;
      for (const notify of this.#listeners) notify(signal, message.slice(colon + 1));
    });
  }

  async close(): Promise<void> {
    this.#listeners.length = 0;
    this.#subscriber?.disconnect();
    this.#subscriber = null;
  }
}

function recordOf(id: string, [owner, head, status, updated, progress, outcome]: (string | null)[]): TaskRecord | null {
  if (head === null || head === undefined || status === null || status === undefined) return null;
  return {
    id,
    owner: owner === '' || owner === undefined ? null : owner,
    head,
    status: status as TaskStatus,
    updatedAt: Number(updated),
    progress: progress ?? null,
    outcome: outcome ?? null,
  };
}
