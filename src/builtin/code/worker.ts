/**
 * The worker thread a program runs in (./runner.ts starts it): one program at a time. The message
 * protocol, all of it: in `run` and `answer`; out `call`, `log` and `done`. A stop is a flag in
 * shared memory, so the interrupt handler sees it while the program computes.
 */
import { parentPort } from 'node:worker_threads';
import { engine, MAX_LOG_CHARS, MAX_LOG_LINE_CHARS, runProgram, type CallAnswer, type SandboxOutcome } from './sandbox.ts';

export type ToWorker =
  | { type: 'run'; code: string; memoryBytes: number; deadline: number; maxCalls: number; stop: SharedArrayBuffer }
  | { type: 'answer'; id: number; answer: CallAnswer };

export type FromWorker =
  { type: 'call'; id: number; name: string; args: string } | { type: 'log'; level: string; line: string } | { type: 'done'; outcome: SandboxOutcome };

const port = parentPort!;
const waiting = new Map<number, (answer: CallAnswer) => void>();
let calls = 0;

const post = (message: FromWorker) => port.postMessage(message);
void engine(); // compiled while the worker waits for its first program

port.on('message', (message: ToWorker) => {
  if (message.type === 'answer') {
    waiting.get(message.id)?.(message.answer);
    waiting.delete(message.id);
    return;
  }
  const stop = new Int32Array(message.stop);
  // A program that calls or logs in a loop without awaiting must not flood the main thread: past
  // its limits (the call that ends the run, the console's budget) nothing more is sent.
  let runCalls = 0;
  let logChars = 0;
  const host = {
    call: (name: string, args: string) =>
      new Promise<CallAnswer>((resolve) => {
        if (runCalls++ > message.maxCalls) return resolve({ ok: false, code: 'cancelled', message: 'The run is ending.' });
        const id = ++calls;
        waiting.set(id, resolve);
        post({ type: 'call', id, name, args });
      }),
    log: (level: string, line: string) => {
      if (logChars > MAX_LOG_CHARS) return;
      logChars += line.length;
      post({ type: 'log', level, line: line.length > MAX_LOG_LINE_CHARS ? `${line.slice(0, MAX_LOG_LINE_CHARS)}…` : line });
    },
    stopped: () => Atomics.load(stop, 0) !== 0,
  };
  runProgram(message.code, host, { memoryBytes: message.memoryBytes, deadline: message.deadline }).then(
    (outcome) => {
      waiting.clear();
      post({ type: 'done', outcome });
    },
    (err: unknown) => {
      waiting.clear();
      post({ type: 'done', outcome: { kind: 'limit', limit: 'crashed', message: `The sandbox failed: ${err instanceof Error ? err.message : 'unknown'}.` } });
    },
  );
});
