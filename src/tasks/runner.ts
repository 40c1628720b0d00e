/**
 * Tasks (docs/tasks.md): a call accepted now and answered later. A task runs the very pipeline a
 * synchronous call runs (`execute`, handed in by app.ts); only where the answer goes differs. A
 * replica runs at most `concurrency` tasks at once, each under a lease it renews; a task accepted
 * when every slot here is taken waits in the store's queue, and whichever replica frees a slot first
 * claims the oldest. Every replica sweeps for lapsed leases: the task goes back to the queue
 * (idempotent tools: the ledger keeps one effect) until it has been attempted `maxAttempts` times,
 * or ends worker_lost.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Caller } from '../callers/keys.ts';
import { problemOf } from '../errors.ts';
import type { Metrics } from '../metrics.ts';
import type { EndStatus, LapseOutcomes, TaskListScope, TaskPage, TaskRecord, TaskStore } from '../store/tasks.ts';
import { Cancellation } from '../tools/context.ts';
import type { InvocationScope } from '../tools/invoke.ts';
import { ProgressThrottle } from '../tools/progress.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import type { Tracer } from '../tracing/index.ts';
import { CANCELLED, errorOf, lapseOutcomes, outcomeOf, renewLease, scopeOfRun } from './run.ts';
import { inputOf, newTaskId, type TaskAccess, type TaskHead, type TaskInput, type TaskJob, type TaskOutcome, type TaskView } from './view.ts';

export interface TaskRunnerOptions {
  store: TaskStore;
  registry: ToolRegistry;
  /** Runs a job's calls through the dispatcher and answers the JSON the synchronous request would. */
  execute: (job: TaskJob, scope: InvocationScope) => Promise<object>;
  /** Who a job runs as and what it may call: its key's tools inside its toolset (a key or toolset gone since: nothing). */
  accessOf: (job: TaskJob) => TaskAccess;
  ttlS: number;
  /** The deadline of a task whose caller and tool set none. */
  timeoutMs: number;
  leaseMs: number;
  /** How many times a task is started at most, counting runs cut short by a replica that died. */
  maxAttempts: number;
  /** How many tasks this replica runs at once; the rest wait, queued, for a slot on any replica. */
  concurrency: number;
  log: Logger;
  tracer: Tracer; // a task's run is traced linked to the request that created it
  metrics?: Metrics;
}

export const POLL_INTERVAL_MS = 1000;
/** How long a starting app waits at most to hear the store's task signals. */
export const TASK_SIGNALS_WAIT_MS = 2000;
/** A long-poll re-reads the task this often even without a signal (a missed message costs this much). */
const WAIT_RECHECK_MS = 1000;
/** Progress is written to the store at most this often per task. */
const PROGRESS_WRITE_MS = 250;
const SWEEP_BATCH = 20;
const FINISH_ATTEMPTS = 5;

export class TaskRunner {
  /** This replica's name on the leases it holds. */
  readonly replica = randomUUID();
  readonly #o: TaskRunnerOptions;
  readonly #running = new Map<string, { cancellation: Cancellation; released: boolean }>();
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #sweeper: NodeJS.Timeout;
  readonly #outcomes: LapseOutcomes;
  /** Resolves once this replica hears the store's signals. */
  readonly listening: Promise<void>;
  #sweeping = false;
  /** Slots promised to a task being created or claimed here, not yet in #running. */
  #reserved = 0;
  #filling = false;
  #fillAgain = false;
  #closed = false;

  constructor(options: TaskRunnerOptions) {
    this.#o = options;
    this.#outcomes = lapseOutcomes(options.maxAttempts);
    this.listening = options.store.onSignal((signal, id) => {
      if (signal === 'cancel') this.#running.get(id)?.cancellation.cancel(new Error('the task was cancelled'));
      else if (signal === 'queued') void this.#fill();
      // 'ended' and 'input': the task is no longer working; long-polls answer.
      else for (const wake of this.#waiters.get(id) ?? []) wake();
    });
    this.#sweeper = setInterval(() => void this.#sweep(), Math.max(50, options.leaseMs / 2)).unref();
  }

  get ttlMs(): number {
    return this.#o.ttlS * 1000;
  }

  /** Whether `caller` may see the task: its own, any task for an admin key, every task when the service is open. */
  static visibleTo(record: TaskRecord, caller: Caller | null): boolean {
    return caller === null ? record.owner === null : caller.admin || record.owner === caller.id;
  }

  /** Creates the task and starts running it here; answers it as it stands (working). */
  async start(job: TaskJob): Promise<TaskView> {
    const now = Date.now();
    const id = newTaskId(now);
    const head: TaskHead = {
      task_id: id,
      tool: job.calls.map((c) => c.name).join(','),
      call_id: job.calls.map((c) => c.id).join(','),
      created_at: new Date(now).toISOString(),
      ttl_s: this.#o.ttlS,
      poll_interval_ms: POLL_INTERVAL_MS,
    };
    const trace = this.#o.tracer.capture(); // null when not tracing
    if (trace !== null) job.trace = trace;
    // A free slot here runs it now; otherwise it waits in the queue for the first free slot anywhere.
    const here = this.#free() > 0;
    if (here) this.#reserved++;
    try {
      await this.#o.store.create({
        id,
        owner: job.caller,
        head: JSON.stringify(head),
        job: JSON.stringify(job),
        rerunnable: this.#rerunnable(job),
        runner: here ? this.replica : null,
        leaseMs: this.#o.leaseMs,
        keepMs: this.#budgetMs(job) + this.ttlMs + this.#o.leaseMs * 4,
      });
    } finally {
      if (here) this.#reserved--;
    }
    if (here) void this.#run(id, job);
    return { ...head, status: 'working', updated_at: head.created_at, progress: null, attempts: here ? 1 : 0, queued: !here };
  }

  get(id: string): Promise<TaskRecord | null> {
    return this.#o.store.get(id);
  }

  /**
   * The task once it is no longer working (ended, or waiting for input), or as it stands after
   * `waitMs`; with `ended`, only once it has ended.
   */
  async wait(id: string, waitMs: number, ended = false): Promise<TaskRecord | null> {
    const until = Date.now() + waitMs;
    for (;;) {
      // Listen before reading, so an end signalled in between is not missed.
      const signal = this.#signalled(id, Math.min(WAIT_RECHECK_MS, Math.max(0, until - Date.now())));
      let record: TaskRecord | null;
      try {
        record = await this.#o.store.get(id);
      } catch (err) {
        signal.stop();
        throw err;
      }
      const waiting = record !== null && (record.status === 'working' || (ended && record.status === 'input_required'));
      if (!waiting || Date.now() >= until) {
        signal.stop();
        return record;
      }
      await signal.promise;
    }
  }

  /**
   * Holds a task that runs on this replica in `input_required` with what it waits for: its handler is
   * aborted and its result dropped; no replica runs it until `resume`. It is kept `waitMs` (default
   * TASK_TTL_S) plus TASK_TTL_S at most meanwhile. False when the task does not run here.
   * A run whose result carries `approval`, `authorization` or `input_requests` is held this way by itself.
   */
  async hold(id: string, input: TaskInput, waitMs = this.ttlMs): Promise<boolean> {
    const run = this.#running.get(id);
    if (run === undefined) return false;
    run.released = true;
    run.cancellation.cancel(new Error('the task waits for input'));
    return this.#o.store.hold(id, this.replica, JSON.stringify(input), waitMs + this.ttlMs);
  }

  /**
   * Runs a task held in `input_required` again, on the first free slot of any replica, from any
   * replica. `inputResponses` (merged into earlier ones) reach the run as `scope.inputResponses`; its
   * deadline counts from now. False when the task was not waiting for input (a second resume).
   */
  async resume(id: string, inputResponses?: Record<string, unknown>): Promise<boolean> {
    const json = await this.#o.store.job(id);
    if (json === null) return false;
    const job = JSON.parse(json) as TaskJob;
    if (inputResponses !== undefined) job.inputResponses = { ...job.inputResponses, ...inputResponses };
    job.receivedAt = Date.now();
    return this.#o.store.resume(id, JSON.stringify(job));
  }

  /** Asks every replica to cancel the task (the one running it aborts the handler; a queued one, or one waiting for input, ends now); false when it had ended. */
  async cancel(id: string): Promise<boolean> {
    const marked = await this.#o.store.requestCancel(id, CANCELLED, this.ttlMs);
    if (marked) this.#running.get(id)?.cancellation.cancel(new Error('the task was cancelled'));
    return marked;
  }

  list(scope: TaskListScope, after: string | null, limit: number): Promise<TaskPage> {
    return this.#o.store.list(scope, after, limit);
  }

  /** Stops sweeping and hands this replica's running tasks over: their leases end now, so another replica decides at once. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    const releases = [...this.#running].map(([id, run]) => {
      run.released = true;
      run.cancellation.cancel(new Error('the replica is shutting down'));
      return this.#o.store.renew(id, this.replica, 0).catch(() => undefined);
    });
    await Promise.all(releases);
  }

  /** Resolves when the task is signalled as ended, or after `ms`; `stop()` stops listening. */
  #signalled(id: string, ms: number): { promise: Promise<void>; stop: () => void } {
    let stop: () => void = () => undefined;
    const promise = new Promise<void>((resolve) => {
      const timer = setTimeout(() => stop(), ms);
      stop = () => {
        clearTimeout(timer);
        const set = this.#waiters.get(id);
        set?.delete(stop);
        if (set?.size === 0) this.#waiters.delete(id);
        resolve();
      };
      let set = this.#waiters.get(id);
      if (set === undefined) this.#waiters.set(id, (set = new Set()));
      set.add(stop);
    });
    return { promise, stop };
  }

  /** Slots free here for one more task. */
  #free(): number {
    return this.#o.concurrency - this.#running.size - this.#reserved;
  }

  /** Claims queued tasks, oldest first, while this replica has free slots; one pass at a time. */
  async #fill(): Promise<void> {
    if (this.#filling) {
      this.#fillAgain = true;
      return;
    }
    this.#filling = true;
    try {
      do {
        this.#fillAgain = false;
        while (!this.#closed && this.#free() > 0) {
          this.#reserved++;
          let claimed;
          try {
            claimed = await this.#o.store.claim(this.replica, this.#o.leaseMs);
          } finally {
            this.#reserved--;
          }
          if (claimed === null) break;
          void this.#run(claimed.id, JSON.parse(claimed.job) as TaskJob);
        }
      } while (this.#fillAgain && !this.#closed);
    } catch (err) {
      this.#o.log.debug({ err }, 'could not claim a queued task');
    } finally {
      this.#filling = false;
    }
  }

  /** A task is run again after its replica died only when every call's tool keeps its effect once. */
  #rerunnable(job: TaskJob): boolean {
    return job.calls.every((call) => {
      const strategy = this.#o.registry.get(call.name)?.idempotency?.strategy;
      return strategy !== undefined && strategy !== 'none';
    });
  }

  /** The longest the task's calls may run: what bounds the record's life while working. */
  #budgetMs(job: TaskJob): number {
    if (job.timeoutMs !== null) return job.timeoutMs;
    return Math.max(...job.calls.map((call) => this.#o.registry.get(call.name)?.timeoutMs ?? this.#o.timeoutMs));
  }

  async #run(id: string, job: TaskJob): Promise<void> {
    const { store, log } = this.#o;
    const run = { cancellation: new Cancellation(), released: false };
    this.#running.set(id, run);
    let renewal: NodeJS.Timeout | undefined, throttle: ProgressThrottle | undefined;
    let ending: [EndStatus, TaskOutcome];
    try {
      renewal = renewLease(store, id, this.replica, this.#o.leaseMs, run, log);
      throttle = new ProgressThrottle(({ done, total }) => {
        store
          .progress(id, this.replica, JSON.stringify(total === undefined ? { done } : { done, total }))
          .catch((err: unknown) => log.debug({ err, task: id }, 'task progress not kept'));
      }, PROGRESS_WRITE_MS);
      const scope = scopeOfRun(id, job, this.#o.accessOf(job), this.#o.timeoutMs, log, run.cancellation, throttle);
      // A run's spans form a trace of their own, linked to the request that created the task.
      const result = await this.#o.tracer.linked(job.trace ?? null, `task ${job.calls.map((c) => c.name).join(',')}`, { 'toolport.task_id': id }, () =>
        this.#o.execute(job, scope),
      );
      ending = outcomeOf(result, run.cancellation.reason !== null);
    } catch (err) {
      if (problemOf(err).status >= 500) log.error({ err, task: id }, 'a task failed inside toolport');
      ending = ['failed', { error: errorOf(err) }];
    } finally {
      clearInterval(renewal);
      throttle?.flush();
      throttle?.close();
      this.#running.delete(id);
    }
    if (!run.released && !(await this.#held(id, ending))) await this.#finish(id, ending);
    void this.#fill();
  }

  /** Holds the task when its result says it waits for input (an approval…); true when held. */
  async #held(id: string, [status, outcome]: [EndStatus, TaskOutcome]): Promise<boolean> {
    const input =
      status === 'completed' && 'result' in outcome && typeof outcome.result === 'object' && outcome.result !== null ? inputOf(outcome.result) : null;
    if (input === null) return false;
    try {
      return await this.#o.store.hold(id, this.replica, JSON.stringify(input), this.ttlMs * 2);
    } catch (err) {
      this.#o.log.warn({ err, task: id }, 'could not hold a task for input: it ends with the result instead');
      return false;
    }
  }

  /** Writes how the task ended, retrying a store that does not answer; if it never does, the lease lapses and a sweep decides. */
  async #finish(id: string, [status, outcome]: [EndStatus, TaskOutcome]): Promise<void> {
    const json = JSON.stringify(outcome);
    for (let attempt = 0; attempt < FINISH_ATTEMPTS; attempt++) {
      try {
        if (await this.#o.store.finish(id, this.replica, status, json, this.ttlMs)) this.#o.metrics?.taskEnded(status);
        return;
      } catch (err) {
        this.#o.log.warn({ err, task: id, attempt }, 'could not record the end of a task');
        await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
      }
    }
  }

  async #sweep(): Promise<void> {
    if (this.#sweeping) return;
    this.#sweeping = true;
    try {
      const { store, maxAttempts, log } = this.#o;
      for (const id of await store.lapsed(SWEEP_BATCH)) {
        const taken = await store.takeOver(id, maxAttempts, this.ttlMs, this.#outcomes);
        if (taken === 'queued') log.info({ task: id }, 'the replica running a task stopped: it waits to run again');
      }
      // The queue's own signal may have been missed while this replica was busy or away.
      await this.#fill();
    } catch (err) {
      this.#o.log.debug({ err }, 'the task sweep did not complete');
    } finally {
      this.#sweeping = false;
    }
  }
}
