/**
 * Tasks in Redis: one hash per task, a sorted set of runners' leases, the queue of tasks waiting for
 * a slot and per-owner listings, all under the one hash tag `{tasks}` so every script runs on Redis
 * Cluster (tasks are long calls, few next to ordinary calls: one slot holds them). Every state change
 * is a Lua script beside this file (lua/task*.lua) timed by the store's own clock. Signals travel on
 * a stream (as BullMQ's queue events do): each replica reads on from the last entry it saw, so one
 * whose connection dropped for a while still learns of every cancel and every end it missed.
 */
import { Cluster, type Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { CommandGuard } from './ledger.ts';
import type { DurableGuard } from './durable.ts';
import { defineScripts, type RedisClient } from './scripts.ts';
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

/** Command → number of keys. */
const SCRIPTS = {
  taskCreate: 6,
  taskRenew: 2,
  taskProgress: 1,
  taskFinish: 4,
  taskCancel: 4,
  taskClaim: 2,
  taskHold: 3,
  taskResume: 3,
  taskLapsed: 1,
  taskTakeOver: 4,
};

type Arg = string | number;
/** The keys of a script that may end a task: the task, the leases, the queue, the signals. */
type EndKeys = [string, string, string, string];
type TaskClient = RedisClient & {
  taskCreate(task: string, leases: string, ownerIndex: string, allIndex: string, queue: string, signals: string, ...args: Arg[]): Promise<number>;
  taskRenew(task: string, leases: string, ...args: Arg[]): Promise<'ok' | 'cancel' | 'lost'>;
  taskProgress(task: string, ...args: Arg[]): Promise<number>;
  taskFinish(...keysAndArgs: [...EndKeys, ...Arg[]]): Promise<number>;
  taskCancel(...keysAndArgs: [...EndKeys, ...Arg[]]): Promise<number>;
  taskClaim(queue: string, leases: string, ...args: Arg[]): Promise<[string, string] | null>;
  taskHold(task: string, leases: string, signals: string, ...args: Arg[]): Promise<number>;
  taskResume(task: string, queue: string, signals: string, ...args: Arg[]): Promise<number>;
  taskLapsed(leases: string, limit: number): Promise<string[]>;
  taskTakeOver(...keysAndArgs: [...EndKeys, ...Arg[]]): Promise<TakeOver>;
};

const FIELDS = ['owner', 'head', 'status', 'updated', 'progress', 'outcome', 'attempts', 'queued', 'input'] as const;
/** How long a listing index lives after its newest task was added (the longest a task can be kept). */
const INDEX_LIFE_MS = 400 * 86_400_000;
/** How long one read of the signals stream waits for an entry (under the client's command timeout). */
const SIGNAL_BLOCK_MS = 800;
/** How long the reader waits before reading again after a failed read (the connection is down). */
const SIGNAL_RETRY_MS = 100;

export class RedisTaskStore implements TaskStore {
  readonly #client: TaskClient;
  readonly #prefix: string;
  readonly #signals: string;
  readonly #run: CommandGuard;
  readonly #log: Logger;
  readonly #durable: DurableGuard;
  #reader: Redis | Cluster | null = null;
  #listening: Promise<void> | null = null;
  readonly #listeners: ((signal: TaskSignal, id: string) => void)[] = [];

  /** `guard` runs a command, turning connection failures into the store's own error (503 at the edge). */
  constructor(client: RedisClient, keyPrefix: string, guard: CommandGuard, log: Logger, durable?: DurableGuard) {
    defineScripts(client, SCRIPTS);
    this.#durable = durable ?? ((command) => guard(() => command(client as never)));
    this.#client = client as TaskClient;
    this.#prefix = `${keyPrefix}{tasks}:`;
    this.#signals = `${this.#prefix}signals`;
    this.#run = guard;
    this.#log = log;
  }

  #task(id: string): string {
    return `${this.#prefix}task:${id}`;
  }

  get #leases(): string {
    return `${this.#prefix}leases`;
  }

  get #queue(): string {
    return `${this.#prefix}queue`;
  }

  #endKeys(id: string): EndKeys {
    return [this.#task(id), this.#leases, this.#queue, this.#signals];
  }

  #index(scope: TaskListScope): string {
    return scope === 'all' ? `${this.#prefix}all` : `${this.#prefix}owner:${scope.owner ?? ''}`;
  }

  async create(task: NewTask): Promise<void> {
    const keys = [this.#task(task.id), this.#leases, this.#index({ owner: task.owner }), this.#index('all'), this.#queue, this.#signals] as const;
    await this.#durable((client: TaskClient) =>
      client.taskCreate(
        ...keys,
        task.id,
        task.owner ?? '',
        task.head,
        task.job,
        task.rerunnable ? '1' : '0',
        task.runner ?? '',
        task.leaseMs,
        task.keepMs,
        INDEX_LIFE_MS,
      ),
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
    return (await this.#durable((client: TaskClient) => client.taskFinish(...this.#endKeys(id), id, runner, status, outcome, ttlMs))) === 1;
  }

  async requestCancel(id: string, outcome: string, ttlMs: number): Promise<boolean> {
    return (await this.#run(() => this.#client.taskCancel(...this.#endKeys(id), id, outcome, ttlMs))) === 1;
  }

  async hold(id: string, runner: string, input: string, keepMs: number): Promise<boolean> {
    return (await this.#run(() => this.#client.taskHold(this.#task(id), this.#leases, this.#signals, id, runner, input, keepMs))) === 1;
  }

  async resume(id: string, job: string | null): Promise<boolean> {
    return (await this.#run(() => this.#client.taskResume(this.#task(id), this.#queue, this.#signals, id, job ?? ''))) === 1;
  }

  async job(id: string): Promise<string | null> {
    const [status, job] = await this.#run(() => this.#client.hmget(this.#task(id), 'status', 'job'));
    return (status === 'working' || status === 'input_required') && job !== null && job !== undefined ? job : null;
  }

  async claim(runner: string, leaseMs: number): Promise<ClaimedTask | null> {
    const claimed = await this.#durable((client: TaskClient) => client.taskClaim(this.#queue, this.#leases, runner, leaseMs, this.#task('')));
    return claimed === null ? null : { id: claimed[0], job: claimed[1] };
  }

  lapsed(limit: number): Promise<string[]> {
    return this.#run(() => this.#client.taskLapsed(this.#leases, limit));
  }

  takeOver(id: string, maxAttempts: number, ttlMs: number, outcomes: LapseOutcomes): Promise<TakeOver> {
    return this.#run(() => this.#client.taskTakeOver(...this.#endKeys(id), id, maxAttempts, ttlMs, outcomes.lost, outcomes.exhausted, outcomes.cancelled));
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

  onSignal(listener: (signal: TaskSignal, id: string) => void): Promise<void> {
    this.#listeners.push(listener);
    if (this.#listening !== null) return this.#listening;
    // A connection of its own: its reads block. It reads on from the last entry seen, across reconnections.
    const reader = (this.#reader =
      this.#client instanceof Cluster ? this.#client.duplicate() : (this.#client as Redis).duplicate({ connectionName: `${this.#prefix}signals` }));
    reader.on('error', (err: Error) => this.#log.debug({ err: err.message }, 'the task signal connection failed'));
    return (this.#listening = this.#startReading(reader));
  }

  /** Resolves once the reader knows where the stream stands (signals from then on reach the listeners). */
  async #startReading(reader: Redis | Cluster): Promise<void> {
    let last: string | null = null;
    while (last === null && this.#reader === reader) {
      try {
        const newest = (await reader.xrevrange(this.#signals, '+', '-', 'COUNT', 1))[0];
        last = newest === undefined ? '0-0' : newest[0];
      } catch {
        await new Promise((resolve) => setTimeout(resolve, SIGNAL_RETRY_MS));
      }
    }
    if (last !== null) void this.#read(reader, last);
  }

  async #read(reader: Redis | Cluster, from: string): Promise<void> {
    let last = from;
    while (this.#reader === reader) {
      let batch: [string, [string, string[]][]][] | null;
      try {
        batch = (await reader.xread('COUNT', 100, 'BLOCK', SIGNAL_BLOCK_MS, 'STREAMS', this.#signals, last)) as typeof batch;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, SIGNAL_RETRY_MS));
        continue;
      }
      for (const [entryId, fields] of batch?.[0]?.[1] ?? []) {
        last = entryId;
        const message = fields[1] ?? '';
        const colon = message.indexOf(':');
        const signal = message.slice(0, colon);
        if (signal !== 'ended' && signal !== 'cancel' && signal !== 'queued' && signal !== 'input') continue;
        for (const notify of this.#listeners) notify(signal, message.slice(colon + 1));
      }
    }
  }

  async close(): Promise<void> {
    this.#listeners.length = 0;
    this.#reader?.disconnect();
    this.#reader = null;
  }
}

function recordOf(id: string, [owner, head, status, updated, progress, outcome, attempts, queued, input]: (string | null)[]): TaskRecord | null {
  if (head === null || head === undefined || status === null || status === undefined) return null;
  return {
    id,
    owner: owner === '' || owner === undefined ? null : owner,
    head,
    status: status as TaskStatus,
    updatedAt: Number(updated),
    progress: progress ?? null,
    outcome: outcome ?? null,
    attempts: Number(attempts ?? 0),
    queued: status === 'working' && queued === '1',
    input: input ?? null,
  };
}
