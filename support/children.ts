import { spawn, type ChildProcess } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';

/** A process started by the harness, with the tail of its output kept for error messages. */
export interface Child {
  readonly name: string;
  readonly proc: ChildProcess;
  /** Last few KB of stderr and stdout, to explain why a server did not come up. */
  output(): string;
}

const TAIL_CHARS = 8192;
const STOP_GRACE_MS = 3000;

// Every child ever started, so cleanup cannot miss one whatever path we exit by.
const children = new Set<Child>();

export function isRunning(child: Child): boolean {
  return child.proc.exitCode === null && child.proc.signalCode === null;
}

export function startChild(name: string, command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Child {
  // Not detached: the child stays in our process group, so a terminal Ctrl-C reaches it too.
  const proc = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  // Pipes must be drained even if we never print them, or a chatty child blocks on write.
  proc.stdout?.on('data', (chunk: Buffer) => {
    stdout = (stdout + chunk.toString()).slice(-TAIL_CHARS);
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-TAIL_CHARS);
  });
  // A spawn failure (e.g. ENOENT) is reported through output() instead of crashing the harness.
  proc.on('error', (err) => {
    stderr += `\n[spawn error] ${err.message}`;
  });
  const child: Child = {
    name,
    proc,
    output: () => `--- ${name} stderr ---\n${stderr.trim() || '(empty)'}\n--- ${name} stdout ---\n${stdout.trim() || '(empty)'}`,
  };
  children.add(child);
  return child;
}

/**
 * Poll `probe` until it returns true. Fails fast if the child dies, and names the
 * child plus its output on timeout, so a broken server is diagnosable from the log.
 */
export async function waitUntilReady(child: Child, what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isRunning(child) || child.proc.pid === undefined) {
      await sleep(50); // let the last output chunks arrive
      throw new Error(`${child.name} exited before ${what} (code ${child.proc.exitCode}, signal ${child.proc.signalCode})\n${child.output()}`);
    }
    if (await probe().catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`${child.name} did not come up: ${what} not reached within ${timeoutMs / 1000} s\n${child.output()}`);
}

/** Probe that is true once `url` answers HTTP 200. */
export function http200(url: string): () => Promise<boolean> {
  return async () => {
    const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
    await res.body?.cancel();
    return res.status === 200;
  };
}

async function stopChild(child: Child): Promise<void> {
  if (!isRunning(child)) return;
  const exited = new Promise((resolve) => child.proc.once('exit', resolve));
  child.proc.kill('SIGTERM');
  // Give servers a moment to shut down cleanly, but never hang on one that ignores SIGTERM.
  const stopped = await Promise.race([exited.then(() => true), sleep(STOP_GRACE_MS).then(() => false)]);
  if (!stopped) {
    child.proc.kill('SIGKILL');
    await exited;
  }
}

export async function stopAll(): Promise<void> {
  await Promise.all([...children].map(stopChild));
}

// Last resort for paths that skip the async cleanup (uncaught error, process.exit):
// 'exit' handlers must be synchronous, so SIGKILL without waiting.
process.on('exit', () => {
  for (const child of children) if (isRunning(child)) child.proc.kill('SIGKILL');
});
