/**
 * The worker pool that runs isolated handlers (docs/plugins.md, "Isolated handlers"): piscina
 * worker threads, each with its own heap limit. A handler runs here with the same ToolContext it
 * would have in process (./protocol.ts); when its call ends early (deadline, cancellation) its
 * worker is terminated and replaced, and a worker that dies under it answers `tool_crashed`.
 *
 * Any caller may run a module's function here with a context (`run`): the pool knows nothing of
 * plugins beyond the module it is told to import. Nothing starts until the first use.
 */
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { callEnd, Cancellation, type CancelListener } from '../context.ts';
import { ToolFailure } from '../failure.ts';
import type { ToolContext, ToolDefinition } from '../types.ts';
import { CallEnded } from '../race.ts';
import { workerBeside, workerExecArgv } from '../worker-file.ts';
import { callSlots, markCancelled } from './call-slots.ts';
import { LOWEST_PRIORITY, perThreadPriority, PriorityWatch } from './priority.ts';
import { CallBridge, contextData, reviveError, type CallTask, type TaskOutcome, type WorkerMessage } from './protocol.ts';

export interface WorkerPoolOptions {
  /** Worker threads (WORKER_POOL_SIZE). */
  size: number;
  /** Each worker's old-generation heap limit (WORKER_MAX_OLD_GENERATION_MB). */
  maxOldGenerationMb: number;
  log: Logger;
}

/** What runs: a tool a plugin module defines (found by name), or a function the module exports. */
export interface IsolatedTarget {
  module: string;
  tool?: string;
  export?: string;
}

/**
 * How long a handler whose caller went away may still take to return before its worker is
 * terminated: starting a worker again costs more CPU than this (measured: 200–250 ms with tsx).
 */
const CANCEL_GRACE_MS = 100;

/**
 * Piscina's abort signal for one call: fires when the call's Cancellation does, with no
 * AbortController made. At the deadline or a missed heartbeat, at once. When the caller goes away,
 * a handler not started yet never starts (the call slots say so to the worker) and one running
 * has CANCEL_GRACE_MS to return and keep its worker; then the signal fires.
 */
class CallAbort implements CancelListener {
  aborted = false;
  #listener: (() => void) | null = null;
  #grace: NodeJS.Timeout | null = null;
  readonly #end: Cancellation;
  readonly #slots: Int32Array;
  readonly #seq: number;

  constructor(end: Cancellation, slots: Int32Array, seq: number) {
    this.#end = end;
    this.#slots = slots;
    this.#seq = seq;
    end.subscribe(this);
  }

  once(_event: 'abort', listener: () => void): void {
    this.#listener = listener;
  }

  off(): void {
    this.#listener = null;
  }

  /** What piscina calls (its types name `off`). */
  removeListener(): void {
    this.#listener = null;
  }

  onCancelled(): void {
    this.aborted = true;
    const reason = this.#end.reason;
    if (reason instanceof CallEnded && reason.kind === 'cancelled') {
      markCancelled(this.#slots, this.#seq);
      this.#grace = setTimeout(terminate, CANCEL_GRACE_MS, this);
      this.#grace.unref();
    } else this.terminate();
  }

  /** Tells piscina: it drops the task if queued, else terminates and replaces the worker running it. */
  terminate(): void {
    this.#listener?.();
  }

  release(): void {
    if (this.#grace !== null) clearTimeout(this.#grace);
    this.#end.unsubscribe(this);
  }
}

function terminate(abort: CallAbort): void {
  abort.terminate();
}

export class WorkerPool {
  readonly #options: WorkerPoolOptions;
  readonly #modules = new Set<string>();
  readonly #calls = new Map<number, CallBridge>();
  #piscina: Piscina | null = null;
  /** Lowers the priority of a worker whose handler keeps running (./priority.ts); null where threads cannot be set one by one. */
  #priority: PriorityWatch | null = null;
  /** What the workers and this thread share of each call (./call-slots.ts). */
  readonly #slots = callSlots();
  #closed = false;
  #seq = 0;

  constructor(options: WorkerPoolOptions) {
    this.#options = options;
  }

  /** Names a module the workers import as they start, so its first call does not wait for it. */
  prepare(module: string): void {
    this.#modules.add(module);
  }

  /** A handler that runs `target` in the pool: what an isolated tool registers. */
  handlerFor(target: IsolatedTarget): ToolDefinition['handler'] {
    this.prepare(target.module);
    return (params, context) => this.run(target, params, context) as ReturnType<ToolDefinition['handler']>;
  }

  /** Worker threads now (replacements included as they start); 0 before the first use. */
  get threads(): number {
    return this.#piscina?.threads.length ?? 0;
  }

  /** Whether a module was named to run here. */
  get prepared(): boolean {
    return this.#modules.size > 0;
  }

  /** Starts the workers now rather than at the first call. */
  start(): void {
    this.#pool();
  }

  async run(target: IsolatedTarget, params: unknown, context: ToolContext): Promise<unknown> {
    const pool = this.#pool();
    const seq = ++this.#seq;
    const bridge = new CallBridge(context);
    const end = callEnd(context);
    const abort = end instanceof Cancellation ? new CallAbort(end, this.#slots, seq) : end;
    const task: CallTask = { seq, module: target.module, params, context: contextData(context, this.#options.log.level) };
    if (target.tool !== undefined) task.tool = target.tool;
    if (target.export !== undefined) task.export = target.export;
    this.#calls.set(seq, bridge);
    this.#priority?.watch();
    let outcome: TaskOutcome;
    try {
      outcome = (await pool.run(task, { signal: abort })) as TaskOutcome;
      const rest = bridge.settled(outcome.sent);
      if (rest !== null) await rest;
    } catch (error) {
      if (abort.aborted) throw error; // the call has already ended: nothing reads this
      throw this.#crashed(error, context);
    } finally {
      this.#calls.delete(seq);
      this.#priority?.ended(seq);
      bridge.close();
      if (abort instanceof CallAbort) abort.release();
    }
    if ('threw' in outcome) throw reviveError(outcome.threw);
    return outcome.returned;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pool = this.#piscina;
    this.#piscina = null;
    this.#priority?.stop();
    await pool?.destroy();
  }

  #pool(): Piscina {
    if (this.#piscina !== null) return this.#piscina;
    if (this.#closed) throw new ToolFailure('handler_error', 'The service is shutting down: the tool could not run.', 'the worker pool is closed');
    const { size, maxOldGenerationMb, log } = this.#options;
    const pool = new Piscina({
      // A path, not a file URL: piscina would parse the URL again on every run.
      filename: fileURLToPath(workerBeside(import.meta.url, 'worker')),
      minThreads: size,
      maxThreads: size,
      concurrentTasksPerWorker: 1,
      resourceLimits: { maxOldGenerationSizeMb: maxOldGenerationMb },
      execArgv: workerExecArgv(true), // the tools' modules may be TypeScript
      workerData: { modules: [...this.#modules], slots: this.#slots },
      // A spinning handler must not slow the event loop: lowered once it keeps running, or from the start where that cannot be done.
      niceIncrement: perThreadPriority ? 0 : LOWEST_PRIORITY,
      recordTiming: false, // nothing reads piscina's histograms: no clock reads per task
    });
    pool.on('message', (message: WorkerMessage) => this.#calls.get(message.seq)?.receive(message));
    // A worker that dies between calls: piscina replaces it; an 'error' nobody hears would end the process.
    pool.on('error', (err: unknown) => log.error({ err }, 'an idle isolated-handler worker died; it is replaced'));
    this.#piscina = pool;
    if (perThreadPriority) this.#priority = new PriorityWatch(this.#slots, () => this.#calls.keys());
    return pool;
  }

  #crashed(error: unknown, context: ToolContext): ToolFailure {
    const detail = crashDetail(error, this.#options.maxOldGenerationMb);
    context.log.error({ err: error, detail }, 'an isolated handler crashed its worker; the worker is replaced');
    return new ToolFailure(
      'tool_crashed',
      `Tool "${context.toolName}" crashed (${detail}). This is not caused by your arguments alone and calling it again the same way will crash again; take another approach.`,
      detail,
    );
  }
}

function crashDetail(error: unknown, maxOldGenerationMb: number): string {
  const { code, message, name } = (error ?? {}) as { code?: unknown; message?: unknown; name?: unknown };
  if (code === 'ERR_WORKER_OUT_OF_MEMORY') return `its worker ran out of memory (limit ${maxOldGenerationMb} MB)`;
  const exited = /worker exited with code: (-?\d+)/.exec(String(message));
  if (exited !== null) return `its worker exited with code ${exited[1]}`;
  return `an error escaped the handler: ${String(name ?? 'Error')}: ${String(message ?? error)}`.slice(0, 300);
}
