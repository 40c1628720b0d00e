/**
 * The client side of MCP's stdio transport: the server as a child process, one JSON-RPC message per
 * line on its stdin and stdout. It does what the SDK's StdioClientTransport does (the same spawn,
 * environment, stderr and close sequence), with two differences that matter per call: the messages
 * written in one turn of the event loop go to the child in one write (a pipe write per message
 * wakes the child each time, the largest cost of a forwarded call), and a line read is checked as
 * a JSON-RPC message without a zod parse (as the HTTP transport does; the SDK Client still checks
 * each result against its schema).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The SDK's cap on a line not yet ended. */
const MAX_BUFFER_BYTES = 10 * 1024 * 1024;
/** How long a closing child is given after its stdin ends, and again after SIGTERM. */
const CLOSE_GRACE_MS = 2000;

export interface StdioServer {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

function isMessage(value: unknown): value is JSONRPCMessage {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && (value as { jsonrpc?: unknown }).jsonrpc === '2.0';
}

export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly #server: StdioServer;
  readonly #stderr = new PassThrough();
  #process: ChildProcess | undefined;
  #buffer: Buffer | null = null;
  /** stdin is corked until the next setImmediate: the messages of one event-loop turn go out in one write. */
  #flushing = false;

  constructor(server: StdioServer) {
    this.#server = server;
  }

  /** The child's stderr (piped through from the start, so it can be read before start()). */
  get stderr(): PassThrough {
    return this.#stderr;
  }

  get pid(): number | null {
    return this.#process?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.#process) throw new Error('the stdio transport is already started');
    return new Promise((resolve, reject) => {
      const child = spawn(this.#server.command, this.#server.args, {
        env: { ...getDefaultEnvironment(), ...this.#server.env },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        ...(this.#server.cwd !== undefined && { cwd: this.#server.cwd }),
      });
      this.#process = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => {
        this.#process = undefined;
        this.onclose?.();
      });
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout!.on('data', (chunk: Buffer) => this.#read(chunk));
      child.stdout!.on('error', (error) => this.onerror?.(error));
      child.stderr!.pipe(this.#stderr);
    });
  }

  #read(chunk: Buffer): void {
    const size = (this.#buffer?.length ?? 0) + chunk.length;
    if (size > MAX_BUFFER_BYTES) {
      this.#buffer = null;
      this.onerror?.(new Error(`ReadBuffer exceeded maximum size of ${MAX_BUFFER_BYTES} bytes`));
      this.close().catch(() => {});
      return;
    }
    let buffer = this.#buffer === null ? chunk : Buffer.concat([this.#buffer, chunk], size);
    let end: number;
    while ((end = buffer.indexOf(10)) !== -1) {
      const line = buffer.toString('utf8', 0, end > 0 && buffer[end - 1] === 13 ? end - 1 : end);
      buffer = buffer.subarray(end + 1);
      this.#deliver(line);
    }
    this.#buffer = buffer.length === 0 ? null : buffer;
  }

  #deliver(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch (err) {
      this.onerror?.(err as Error);
      return;
    }
    if (!isMessage(message)) {
      this.onerror?.(new Error('the server sent a line that is not a JSON-RPC message'));
      return;
    }
    this.onmessage?.(message);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      const stdin = this.#process?.stdin;
      if (!stdin) throw new Error('Not connected');
      if (!this.#flushing) {
        this.#flushing = true;
        stdin.cork();
        setImmediate(() => {
          this.#flushing = false;
          stdin.uncork();
        });
      }
      if (stdin.write(`${JSON.stringify(message)}\n`)) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /** Ends the child's stdin, then SIGTERM, then SIGKILL, each after a grace period (as the SDK does). */
  async close(): Promise<void> {
    const child = this.#process;
    this.#process = undefined;
    this.#buffer = null;
    if (child === undefined) return;
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const grace = () => Promise.race([closed, new Promise<void>((resolve) => setTimeout(resolve, CLOSE_GRACE_MS).unref())]);
    try {
      child.stdin?.end();
    } catch {
      // already gone
    }
    await grace();
    if (child.exitCode === null) {
      try {
        child.kill('SIGTERM');
      } catch {
        // already gone
      }
      await grace();
    }
    if (child.exitCode === null) {
      try {
        child.kill('SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

/** Children still alive, killed if the service exits without closing them (a crash, process.exit). */
export const liveChildren = new Set<number>();
let exitHookInstalled = false;
export function trackChild(pid: number): void {
  liveChildren.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const child of liveChildren) {
      try {
        process.kill(child, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });
}
