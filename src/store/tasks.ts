/**
 * The task store (docs/tasks.md): durable task records with a runner's lease, kept by every backend
 * (store/memory/tasks.ts, store/redis/tasks.ts) with the same behaviour. It knows nothing of tools:
 * what a task is about (`head`), what re-runs it (`job`) and how it ended (`outcome`) are JSON text
 * made by the task runner; the store only keeps them, guards the lease, keeps the queue of tasks
 * waiting for a free slot, and signals the replicas through a carrier that outlives a dropped connection.
 */

/** `input_required`: held until someone answers (an approval, a client's input); no replica runs it meanwhile. */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export type EndStatus = Exclude<TaskStatus, 'working' | 'input_required'>;

export interface TaskRecord {
  readonly id: string;
  /** The API key id that created it; null when the service is open. */
  readonly owner: string | null;
  /** JSON: what the task says about itself (tool, call id, created_at…), fixed at creation. */
  readonly head: string;
  readonly status: TaskStatus;
  /** Epoch ms of the last change (the store's clock). */
  readonly updatedAt: number;
  /** JSON of the last progress report, or null. */
  readonly progress: string | null;
  /** JSON of how it ended ({result} or {error}), or null while working. */
  readonly outcome: string | null;
  /** How many times a replica started running it (0 while it first waits for a slot). */
  readonly attempts: number;
  /** Working, but waiting for a free slot on some replica. */
  readonly queued: boolean;
  /** JSON of what an `input_required` task waits for (made by the runner), else null. */
  readonly input: string | null;
}

export interface NewTask {
  readonly id: string;
  readonly owner: string | null;
  readonly head: string;
  /** JSON: everything another replica needs to run the task again. */
  readonly job: string;
  /** Whether a task whose runner died is run again (true) or ends worker_lost (false). */
  readonly rerunnable: boolean;
  /** The replica that runs it first; null: it waits in the queue for any replica's free slot. */
  readonly runner: string | null;
  readonly leaseMs: number;
  /** How long the record may live at most while working (its deadline plus its TTL). */
  readonly keepMs: number;
}

/**
 * What a replica made of a task whose lease lapsed: put back in the queue (to be claimed by any
 * replica), left alone (renewed meanwhile, or already queued), or ended.
 */
export type TakeOver = 'queued' | 'alive' | 'ended';

/** Outcomes the store writes by itself, for a runner that died: prepared JSON, never edited. */
export interface LapseOutcomes {
  /** Not rerunnable. */
  readonly lost: string;
  /** Rerunnable, but it has been attempted as often as allowed. */
  readonly exhausted: string;
  readonly cancelled: string;
}

/** A queued task a replica claimed: it is now that replica's, under its lease. */
export interface ClaimedTask {
  readonly id: string;
  readonly job: string;
}

/** ended: the task ended; cancel: a cancel was asked for; queued: a task waits for a free slot; input: a task waits for input. */
export type TaskSignal = 'ended' | 'cancel' | 'queued' | 'input';

/** Whose tasks to list: one owner's, or every task (admin keys). */
export type TaskListScope = { owner: string | null } | 'all';

export interface TaskPage {
  readonly records: TaskRecord[];
  /** The id to pass as `after` for the next page; null on the last one. */
  readonly next: string | null;
}

export interface TaskStore {
  create(task: NewTask): Promise<void>;
  get(id: string): Promise<TaskRecord | null>;
  /**
   * Extends the runner's lease. 'ok': keep running; 'cancel': a cancel was asked for; 'lost': the
   * task is no longer this runner's (it ended, or another replica took it over).
   */
  renew(id: string, runner: string, leaseMs: number): Promise<'ok' | 'cancel' | 'lost'>;
  /** Keeps the last progress report; ignored unless the task is still this runner's. */
  progress(id: string, runner: string, progress: string): Promise<void>;
  /** Ends the task, keeping it `ttlMs` more and signalling 'ended'; false when it was not this runner's. */
  finish(id: string, runner: string, status: EndStatus, outcome: string, ttlMs: number): Promise<boolean>;
  /**
   * Marks a working task to be cancelled and signals 'cancel' to every replica; a task still queued
   * or waiting for input ends `cancelled` at once with `outcome`, kept `ttlMs`. False when it has ended.
   */
  requestCancel(id: string, outcome: string, ttlMs: number): Promise<boolean>;
  /**
   * Holds a working task of `runner`'s in `input_required` with `input` (JSON), without a runner or a
   * lease, kept at most `keepMs` while it waits; signals 'input'. False when it was not this runner's.
   */
  hold(id: string, runner: string, input: string, keepMs: number): Promise<boolean>;
  /**
   * Puts an `input_required` task back in the queue (working, its input cleared), with `job` as its
   * new job when given; signals 'queued'. False when it was not waiting for input.
   */
  resume(id: string, job: string | null): Promise<boolean>;
  /** The job of a task still working or waiting for input (what a resume starts from), else null. */
  job(id: string): Promise<string | null>;
  /** The oldest queued task, now `runner`'s under a lease, its attempts counted; null when none waits. */
  claim(runner: string, leaseMs: number): Promise<ClaimedTask | null>;
  /** Ids of working tasks whose lease has lapsed, at most `limit`. */
  lapsed(limit: number): Promise<string[]>;
  /**
   * Looks at a lapsed task in one atomic step: a cancelled one ends `cancelled`; a rerunnable one
   * attempted fewer than `maxAttempts` times goes back to the queue (its place: its age) and
   * 'queued' is signalled; a rerunnable one attempted that often ends with `outcomes.exhausted`;
   * any other ends with `outcomes.lost`.
   */
  takeOver(id: string, maxAttempts: number, ttlMs: number, outcomes: LapseOutcomes): Promise<TakeOver>;
  /** Tasks newest first (ids sort by creation time), after the id `after` when given. */
  list(scope: TaskListScope, after: string | null, limit: number): Promise<TaskPage>;
  /**
   * Tells `listener` of every task that ends, every cancel asked for and every task queued, on any
   * replica; a listener whose connection dropped for a while is told what it missed once it is back.
   * Resolves once signals reach it.
   */
  onSignal(listener: (signal: TaskSignal, id: string) => void): Promise<void>;
  close(): Promise<void>;
}
