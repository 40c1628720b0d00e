/**
 * Runs programs in worker threads (./worker.ts), off the main event loop: whatever a program does,
 * the service keeps answering. A worker runs one program at a time; finished cleanly, it waits
 * (unreferenced) for the next; a worker past its deadline or stop is terminated, the only way to end
 * a loop of slow built-ins the engine's interrupt handler does not see in time.
 */
import { AsyncResource } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';
import { workerBeside, workerExecArgv } from '../../tools/worker-file.ts';
import type { CallAnswer, SandboxOutcome } from './sandbox.ts';
import type { FromWorker, ToWorker } from './worker.ts';

/** How long past its deadline (or a stop) a worker may take to end by itself before it is terminated. */
const GRACE_MS = 250;
const MAX_IDLE = 2;

export interface ProgramHost {
  call(name: string, argsJson: string): Promise<CallAnswer>;
  log(level: string, line: string): void;
}

export interface RunLimits {
  memoryBytes: number;
  /** Epoch ms: the whole run ends here, the wait for a worker included. */
  deadline: number;
  /** The calls the program may make; the worker sends no more than one past them. */
  maxCalls: number;
}

export interface RunningProgram {
  readonly outcome: Promise<SandboxOutcome>;
  /** Ends the program now (an inner call ended the run, or its caller went away). */
  stop(): void;
}

const WORKER_URL = workerBeside(import.meta.url, 'worker');
/** The sandbox's worker loads no plugin: it needs tsx only when it is TypeScript itself. */
const WORKER_ARGV = workerExecArgv(!WORKER_URL.pathname.endsWith('.js'));

const idle: Worker[] = [];

function takeWorker(): Worker {
  const worker = idle.pop() ?? new Worker(WORKER_URL, { execArgv: WORKER_ARGV });
  worker.ref();
  return worker;
}

/** Only our listeners: a Worker listens to its own listener changes to start its port. */
function detach(worker: Worker): void {
  for (const event of ['message', 'error', 'exit']) worker.removeAllListeners(event);
}

function release(worker: Worker): void {
  detach(worker);
  if (idle.length >= MAX_IDLE) {
    void worker.terminate();
    return;
  }
  worker.unref();
  worker.on('error', () => undefined);
  worker.on('exit', () => idle.splice(idle.indexOf(worker) >>> 0, 1));
  idle.push(worker);
}

/** Starts a worker ahead of the first run (it compiles the engine as it starts), unless one waits already. */
export function warmUp(): void {
  if (idle.length === 0) release(takeWorker());
}

/** How many programs run at once (CODE_WORKERS); the others wait for a worker, within their deadline. */
let maxRunning = 8;
let running = 0;
const queued: (() => void)[] = [];

export function setMaxWorkers(count: number): void {
  maxRunning = count;
}

/** A worker slot, or null when the deadline or a stop comes first. */
async function slot(deadline: number, stopped: () => boolean): Promise<boolean> {
  while (running >= maxRunning) {
    let timer: NodeJS.Timeout | undefined;
    let wake!: () => void;
    await new Promise<void>((resolve) => {
      wake = resolve;
      queued.push(resolve);
      timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
    });
    clearTimeout(timer);
    queued.splice(queued.indexOf(wake) >>> 0, 1);
    if (stopped() || Date.now() >= deadline) return false;
  }
  running += 1;
  return true;
}

function freeSlot(): void {
  running -= 1;
  queued.shift()?.();
}

const OUT_OF_TIME: SandboxOutcome = {
  kind: 'limit',
  limit: 'time',
  message: 'The program ran out of time (its deadline covers the whole run, tool calls and loops included).',
};

export function runProgramInWorker(code: string, host: ProgramHost, limits: RunLimits): RunningProgram {
  let started: RunningProgram | null = null;
  let stopped = false;
  const outcome = (async (): Promise<SandboxOutcome> => {
    if (!(await slot(limits.deadline, () => stopped))) return stopped ? { kind: 'stopped' } : OUT_OF_TIME;
    if (stopped) {
      freeSlot();
      return { kind: 'stopped' };
    }
    started = startInWorker(code, host, limits);
    try {
      return await started.outcome;
    } finally {
      freeSlot();
    }
  })();
  return {
    outcome,
    stop: () => {
      stopped = true;
      started?.stop();
    },
  };
}

function startInWorker(code: string, host: ProgramHost, limits: RunLimits): RunningProgram {
  const worker = takeWorker();
  const stopFlag = new SharedArrayBuffer(4);
  let finish!: (outcome: SandboxOutcome, reusable: boolean) => void;
  let watchdog: NodeJS.Timeout | undefined;
  let ended = false;
  const outcome = new Promise<SandboxOutcome>((resolve) => {
    finish = (result, reusable) => {
      if (ended) return;
      ended = true;
      clearTimeout(watchdog);
      if (reusable) release(worker);
      else {
        detach(worker);
        void worker.terminate();
      }
      resolve(result);
    };
  });
  const killAfter = (ms: number, result: SandboxOutcome) => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => finish(result, false), ms);
  };
  // The program's calls run in the context of the call that started it (its trace span, its request), not the worker's.
  const onMessage = AsyncResource.bind((message: FromWorker) => {
    if (message.type === 'log') host.log(message.level, message.line);
    else if (message.type === 'call') {
      void host
        .call(message.name, message.args)
        .catch((): CallAnswer => ({ ok: false, code: 'handler_error', message: 'The call could not be made.' }))
        .then((answer) => {
          if (!ended) worker.postMessage({ type: 'answer', id: message.id, answer } satisfies ToWorker);
        });
    } else finish(message.outcome, true);
  });
  worker.on('message', onMessage);
  const crashed = (why: string) => finish({ kind: 'limit', limit: 'crashed', message: `The sandbox's worker ended (${why}).` }, false);
  worker.on('error', (err) => crashed(err.message));
  worker.on('exit', (exitCode) => crashed(`exit code ${exitCode}`));
  worker.postMessage({ type: 'run', ...limits, code, stop: stopFlag } satisfies ToWorker);
  killAfter(Math.max(0, limits.deadline - Date.now()) + GRACE_MS, OUT_OF_TIME);
  return {
    outcome,
    stop: () => {
      if (ended) return;
      Atomics.store(new Int32Array(stopFlag), 0, 1);
      killAfter(GRACE_MS, { kind: 'stopped' });
    },
  };
}
