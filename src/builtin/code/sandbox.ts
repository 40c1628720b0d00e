/**
 * A program run in QuickJS compiled to WebAssembly (quickjs-emscripten, the synchronous build): the
 * only ways out are the two host functions the prelude hides in closures — a tool call and a
 * console line — and both carry only strings, so no host object ever enters the sandbox.
 *
 * This runs in a worker thread (./worker.ts). The interrupt handler ends the program at its
 * deadline or when the host stops it, but QuickJS polls it only every few thousand calls and
 * loop turns, so a loop of slow built-ins (String.prototype.repeat of a million characters) can
 * run long past it: the main thread's watchdog ends the worker then (./runner.ts).
 */
import {
  newQuickJSWASMModule,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSWASMModule,
} from 'quickjs-emscripten';
import { PRELUDE } from './prelude.ts';

/** How long the run holds its thread's event loop across jobs before it lets messages in. */
const YIELD_MS = 20;
/** The engine's own stack, well inside Node's (a deeper recursion is a RangeError in the program). */
const STACK_BYTES = 256 * 1024;
const MAX_STACK_CHARS = 600;
/** The most console output a run keeps, and the longest line. */
export const MAX_LOG_CHARS = 20_000;
export const MAX_LOG_LINE_CHARS = 2_000;

export interface SandboxLimits {
  memoryBytes: number;
  /** Epoch ms: the whole run ends here, loops included. */
  deadline: number;
}

/** What the host answers a tool call with: the JSON text the program receives, or why it throws. */
export type CallAnswer = { ok: true; json: string } | { ok: false; code: string; message: string };

export interface SandboxHost {
  /** A tool call of the program; `argsJson` is the program's own JSON.stringify of its arguments. */
  call(name: string, argsJson: string): Promise<CallAnswer>;
  log(level: string, line: string): void;
  /** Set when the run must end now (its caller went away, or an inner call ended it); checked as the program runs. */
  stopped(): boolean;
}

/** The error a program ended with, as the model reads it. */
export interface ProgramError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}

export type SandboxOutcome =
  /** `json` is the return value's JSON text (undefined: nothing JSON was returned). */
  | { kind: 'returned'; json: string | undefined }
  | { kind: 'threw'; error: ProgramError }
  /** A limit ended it: `time` (the deadline), `stuck` (it awaits what nothing can settle), `crashed` (its worker died). */
  | { kind: 'limit'; limit: 'time' | 'stuck' | 'crashed'; message: string }
  | { kind: 'stopped' };

let modulePromise: Promise<QuickJSWASMModule> | null = null;

/** The WebAssembly module, compiled once per process; each run has its own runtime (heap, limits) in it. */
export function engine(): Promise<QuickJSWASMModule> {
  modulePromise ??= newQuickJSWASMModule(RELEASE_SYNC);
  return modulePromise;
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** One run of a program: the body of an async function, in a fresh runtime and context. */
export async function runProgram(code: string, host: SandboxHost, limits: SandboxLimits): Promise<SandboxOutcome> {
  const runtime = (await engine()).newRuntime();
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(STACK_BYTES);
  const run = new ProgramRun(runtime, host, limits);
  try {
    return await run.execute(code);
  } finally {
    run.dispose();
    runtime.dispose();
  }
}

class ProgramRun {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #host: SandboxHost;
  readonly #limits: SandboxLimits;
  /** Host calls not answered yet; disposed with the run if it ends first. */
  readonly #pending = new Set<QuickJSDeferredPromise>();
  #interrupted: 'time' | 'stopped' | null = null;
  /** Resolved when a host call is answered: the driver then runs the jobs it enabled. */
  #wake: (() => void) | null = null;

  constructor(runtime: QuickJSRuntime, host: SandboxHost, limits: SandboxLimits) {
    this.#runtime = runtime;
    this.#host = host;
    this.#limits = limits;
    this.#context = runtime.newContext();
    runtime.setInterruptHandler(() => this.#shouldInterrupt());
  }

  #shouldInterrupt(): boolean {
    const now = Date.now();
    if (this.#host.stopped()) this.#interrupted = 'stopped';
    else if (now >= this.#limits.deadline) this.#interrupted = 'time';
    return this.#interrupted !== null;
  }

  async execute(code: string): Promise<SandboxOutcome> {
    this.#install();
    // The body on the first line, so the program's line numbers are its own.
    const started = this.#context.evalCode(`(async () => {${code}\n})()`, 'program.js');
    if (started.error !== undefined) {
      const error = this.#errorOf(started.error);
      started.error.dispose();
      return this.#interruption() ?? { kind: 'threw', error };
    }
    const promise = started.value;
    try {
      return await this.#drive(promise);
    } finally {
      promise.dispose();
    }
  }

  /** Runs jobs until the program's promise settles, waiting for host calls in between. */
  async #drive(promise: QuickJSHandle): Promise<SandboxOutcome> {
    let heldSince = performance.now();
    for (;;) {
      const stop = this.#interruption();
      if (stop !== null) return stop;
      const ran = this.#runtime.executePendingJobs(1);
      if (ran.error !== undefined) {
        const error = this.#errorOf(ran.error);
        ran.error.dispose();
        return this.#interruption() ?? { kind: 'threw', error };
      }
      if (ran.value > 0) {
        if (performance.now() - heldSince > YIELD_MS) {
          await yieldToLoop();
          heldSince = performance.now();
        }
        continue;
      }
      const state = this.#context.getPromiseState(promise);
      if (state.type === 'fulfilled') return { kind: 'returned', json: this.#jsonOf(state.value) };
      if (state.type === 'rejected') {
        const error = this.#errorOf(state.error);
        state.error.dispose();
        return this.#interruption() ?? { kind: 'threw', error };
      }
      if (this.#pending.size === 0)
        return { kind: 'limit', limit: 'stuck', message: 'The program awaits a promise that nothing will settle (no tool call is running).' };
      await this.#nextAnswer();
      heldSince = performance.now();
    }
  }

  /** Waits for a host call's answer, the deadline, or a stop, whichever comes first. */
  async #nextAnswer(): Promise<void> {
    const left = Math.max(0, this.#limits.deadline - Date.now());
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#wake = resolve;
      timer = setTimeout(resolve, Math.min(left, 1000));
    });
    clearTimeout(timer);
    this.#wake = null;
    if (this.#host.stopped()) this.#interrupted = 'stopped';
    else if (Date.now() >= this.#limits.deadline) this.#interrupted = 'time';
  }

  #interruption(): SandboxOutcome | null {
    switch (this.#interrupted) {
      case null:
        return null;
      case 'stopped':
        return { kind: 'stopped' };
      case 'time':
        return { kind: 'limit', limit: 'time', message: 'The program ran out of time (its deadline covers the whole run, tool calls and loops included).' };
    }
  }

  /** The prelude gets the two host functions as arguments and keeps them in closures: nothing else reaches the host. */
  #install(): void {
    const context = this.#context;
    const call = context.newFunction('call', (nameHandle, argsHandle) => this.#call(nameHandle, argsHandle));
    const log = context.newFunction('log', (levelHandle, lineHandle) => {
      if (context.typeof(levelHandle) === 'string' && context.typeof(lineHandle) === 'string')
        this.#host.log(context.getString(levelHandle), context.getString(lineHandle));
    });
    const prelude = context.unwrapResult(context.evalCode(PRELUDE, 'prelude.js'));
    const installed = context.callFunction(prelude, context.undefined, call, log);
    for (const handle of [call, log, prelude]) handle.dispose();
    context.unwrapResult(installed).dispose();
  }

  #call(nameHandle: QuickJSHandle, argsHandle: QuickJSHandle): QuickJSHandle {
    const context = this.#context;
    const deferred = context.newPromise();
    this.#pending.add(deferred);
    const name = context.typeof(nameHandle) === 'string' ? context.getString(nameHandle) : '';
    const args = context.typeof(argsHandle) === 'string' ? context.getString(argsHandle) : 'null';
    void this.#host
      .call(name, args)
      .catch((err: unknown): CallAnswer => ({ ok: false, code: 'handler_error', message: err instanceof Error ? err.message : 'the call failed' }))
      .then((answer) => {
        if (!deferred.alive) return; // the run ended first
        this.#pending.delete(deferred);
        const text = context.newString(answer.ok ? `{"ok":true,"value":${answer.json}}` : JSON.stringify(answer));
        deferred.resolve(text);
        text.dispose();
        this.#wake?.();
      });
    return deferred.handle;
  }

  /** The program's return value as JSON text, made inside the sandbox (its toJSON methods run there). */
  #jsonOf(value: QuickJSHandle): string | undefined {
    const context = this.#context;
    try {
      const json = context.getProp(context.global, 'JSON');
      const stringify = context.getProp(json, 'stringify');
      const result = context.callFunction(stringify, json, value);
      json.dispose();
      stringify.dispose();
      if (result.error !== undefined) {
        result.error.dispose();
        return undefined;
      }
      const text = context.typeof(result.value) === 'string' ? context.getString(result.value) : undefined;
      result.value.dispose();
      return text;
    } finally {
      value.dispose();
    }
  }

  /** What the model reads of a thrown value; read field by field, so a hostile getter cannot break the host. */
  #errorOf(handle: QuickJSHandle): ProgramError {
    const context = this.#context;
    const text = (key: string): string | undefined => {
      try {
        const prop = context.getProp(handle, key);
        const value = context.typeof(prop) === 'string' ? context.getString(prop) : undefined;
        prop.dispose();
        return value;
      } catch {
        return undefined; // a getter that throws
      }
    };
    if (context.typeof(handle) !== 'object') {
      const shown = context.typeof(handle) === 'string' ? context.getString(handle) : context.typeof(handle);
      return { name: 'Error', message: `the program threw a non-Error value: ${shown.slice(0, 500)}` };
    }
    const code = text('code');
    const stack = text('stack');
    return {
      name: (text('name') ?? 'Error').slice(0, 100),
      message: (text('message') ?? '').slice(0, 2000),
      ...(code !== undefined && { code: code.slice(0, 100) }),
      ...(stack !== undefined && stack !== '' && { stack: stack.slice(0, MAX_STACK_CHARS) }),
    };
  }

  dispose(): void {
    for (const deferred of this.#pending) deferred.dispose();
    this.#pending.clear();
    this.#context.dispose();
  }
}
