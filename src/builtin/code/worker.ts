/**
 * The worker thread a program runs in (./runner.ts starts it): one program at a time. The message
 * protocol, all of it: in `run` and `answer`; out `call`, `log` and `done`. A stop is a flag in
 * shared memory, so the interrupt handler sees it while the program computes.
 */
import { parentPort } from 'node:worker_threads';
import { engine, runProgram, type CallAnswer, type SandboxOutcome } from './sandbox.ts';

export type ToWorker =
  { type: 'run'; code: string; memoryBytes: number; deadline: number; stop: SharedArrayBuffer } | { type: 'answer'; id: number; answer: CallAnswer };

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
  const host = {
    call: (name: string, args: string) =>
      new Promise<CallAnswer>((resolve) => {
        const id = ++calls;
        waiting.set(id, resolve);
        post({ type: 'call', id, name, args });
      }),
    log: (level: string, line: string) => post({ type: 'log', level, line }),
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
