/**
 * One run of code_run (docs/code-mode.md): the program in the sandbox, each of its tool calls a
 * nested call of code_run's caller through the whole pipeline, recorded under the run's key (the
 * program's hash and the call's index) so that running the same program again replays what already
 * succeeded. A call that waits for a person ends the run with that same failure.
 */
import { sha256Hex } from '../../tools/hash.ts';
import type { CallContext, CancelListener } from '../../tools/context.ts';
import { WaitsForPerson } from '../../tools/failure.ts';
import type { InvocationResult } from '../../tools/outcome.ts';
import type { HandlerReturn } from '../../tools/types.ts';
import { isObject, parseJson } from '../../json.ts';
import { JsonInputError } from '../../errors.ts';
import { runProgramInWorker, type RunningProgram } from './runner.ts';
import { MAX_LOG_CHARS, MAX_LOG_LINE_CHARS, type CallAnswer, type ProgramError, type SandboxOutcome } from './sandbox.ts';

export interface CodeLimits {
  memoryMb: number;
  timeMs: number;
  maxCalls: number;
  /** The longest JSON of the program's return value. */
  maxOutputChars: number;
  /** How long an inner call's success is kept for a run again (code_replay_s). */
  replayS: number;
  /** How many programs run at once. */
  workers: number;
}

/** One inner call as the answer lists it. */
export interface ProgramCall {
  name: string;
  success: boolean;
  duration_ms: number;
  error?: string;
  replayed?: true;
}

/** The program's own clock ends a little before the call's deadline, so its answer (logs, calls) still gets out. */
const ANSWER_MARGIN_MS = 100;
const WAITS_FOR_PERSON = new Set(['approval_required', 'authorization_required']);

class ProgramRunState implements CancelListener {
  readonly calls: ProgramCall[] = [];
  readonly logs: string[] = [];
  #logChars = 0;
  #index = 0;
  readonly #inFlight = new Set<Promise<unknown>>();
  /** The inner result that ended the run (it waits for a person). */
  waiting: InvocationResult | null = null;
  /** Set when the program made more calls than it may. */
  overCalls = false;
  program: RunningProgram | null = null;
  readonly #run: string;

  constructor(
    readonly context: CallContext,
    readonly limits: CodeLimits,
    code: string,
  ) {
    this.#run = sha256Hex(code);
  }

  onCancelled(): void {
    this.program?.stop();
  }

  log(level: string, line: string): void {
    if (this.#logChars >= MAX_LOG_CHARS) return;
    const shown = `${level === 'log' ? '' : `[${level}] `}${line.length > MAX_LOG_LINE_CHARS ? `${line.slice(0, MAX_LOG_LINE_CHARS)}…` : line}`;
    this.#logChars += shown.length;
    this.logs.push(this.#logChars >= MAX_LOG_CHARS ? '… (more console output was left out)' : shown);
  }

  call(name: string, argsJson: string): Promise<CallAnswer> {
    const answer = this.#call(name, argsJson);
    this.#inFlight.add(answer);
    // Only tracks the call: its caller receives the answer, and a rejection, itself.
    const settled = () => this.#inFlight.delete(answer);
    answer.then(settled, settled);
    return answer;
  }

  async #call(name: string, argsJson: string): Promise<CallAnswer> {
    if (this.waiting !== null || this.overCalls) return { ok: false, code: 'cancelled', message: 'The run is ending.' };
    const index = this.#index++;
    if (index >= this.limits.maxCalls) {
      this.overCalls = true;
      this.program?.stop();
      return { ok: false, code: 'cancelled', message: 'The run is ending.' };
    }
    // The limits of any call's JSON: depth, exact integers, no prototype keys.
    let args: unknown;
    try {
      args = parseJson(argsJson);
    } catch (err) {
      args = err instanceof JsonInputError ? err : null;
    }
    if (!isObject(args) || args instanceof JsonInputError) {
      this.calls.push({ name, success: false, duration_ms: 0, error: 'invalid_arguments' });
      const why = args instanceof JsonInputError ? args.message : 'they must be an object';
      return { ok: false, code: 'invalid_arguments', message: `The arguments of tools.${name} were refused: ${why}.` };
    }
    const result = await this.context.invokeWhole(name, args, { run: this.#run, index, ttlS: this.limits.replayS });
    const code = result.error?.code;
    this.calls.push({
      name,
      success: result.success,
      duration_ms: result.duration_ms,
      ...(code !== undefined && { error: code }),
      ...(result.replayed && { replayed: true as const }),
    });
    if (code !== undefined && WAITS_FOR_PERSON.has(code)) {
      this.waiting = result;
      this.program?.stop();
    }
    if (!result.success) return { ok: false, code: code ?? 'tool_failed', message: result.message };
    const json = JSON.stringify(result.value ?? result.message);
    // The program's heap is limited: a value larger than a quarter of it is refused before it is copied in.
    const most = (this.limits.memoryMb * 1024 * 1024) / 4;
    if (json.length > most) {
      return {
        ok: false,
        code: 'result_too_large',
        message: `tools.${name} answered ${json.length} characters, more than a program may receive (${most}); ask it for less.`,
      };
    }
    return { ok: true, json };
  }

  /** Waits for the inner calls still running, so a run again finds their successes recorded. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }
}

/** code_run's handler: runs the program and answers its value, logs and calls. */
export async function runCode(code: string, context: CallContext, limits: CodeLimits): Promise<HandlerReturn> {
  const state = new ProgramRunState(context, limits, code);
  const deadline = Math.min(Date.now() + limits.timeMs, context.deadline - ANSWER_MARGIN_MS);
  const program = runProgramInWorker(code, state, { memoryBytes: limits.memoryMb * 1024 * 1024, deadline, maxCalls: limits.maxCalls });
  state.program = program;
  context.ended.subscribe(state);
  let outcome: SandboxOutcome;
  try {
    outcome = await program.outcome;
    await state.settled();
  } finally {
    context.ended.unsubscribe(state);
  }
  if (state.waiting !== null) throw new WaitsForPerson(state.waiting);
  return answerOf(outcome, state, limits);
}

function answerOf(outcome: SandboxOutcome, state: ProgramRunState, limits: CodeLimits): HandlerReturn {
  const { calls, logs } = state;
  const made = `${calls.length} tool call${calls.length === 1 ? '' : 's'}`;
  if (state.overCalls) return failed(state, { name: 'LimitExceeded', message: `The program made more than ${limits.maxCalls} tool calls.` });
  if (outcome.kind === 'returned') {
    const json = outcome.json;
    if (json !== undefined && json.length > limits.maxOutputChars)
      return failed(state, {
        name: 'LimitExceeded',
        message: `The program returned ${json.length} characters of JSON, more than ${limits.maxOutputChars}: return only what the answer needs.`,
      });
    const value: unknown = json === undefined ? null : JSON.parse(json);
    return { message: `The program returned (${made}).`, value: { value, logs, calls } };
  }
  if (outcome.kind === 'threw') return failed(state, outcome.error);
  if (outcome.kind === 'limit') return failed(state, { name: 'LimitExceeded', message: outcome.message });
  return failed(state, { name: 'Cancelled', message: 'The run was stopped.' });
}

function failed(state: ProgramRunState, error: ProgramError): HandlerReturn {
  const code = error.code === undefined ? '' : ` (code ${error.code})`;
  return {
    success: false,
    message: `The program failed: ${error.name}: ${error.message}${code}. ${state.calls.length} tool call(s) ran; fix the program and run it again.`,
    value: { error, logs: state.logs, calls: state.calls },
  };
}
