/** Upstream tool servers for the tool-source tests: a Python one (another language) and a Node one for faults. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { http200, startChild, waitUntilReady, type Child } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';

const PYTHON_SERVER = fileURLToPath(new URL('../fixtures/upstreams/tool_server.py', import.meta.url));

export interface PythonToolServer {
  url: string;
  stop(): Promise<void>;
}

/** test/fixtures/upstreams/tool_server.py on a free port; python3 missing fails with a clear message. */
export async function startPythonToolServer(): Promise<PythonToolServer> {
  const child: ChildProcess = spawn('python3', [PYTHON_SERVER, '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the Python tool server did not start within 10 s: ${stderr}`)), 10_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(new Error(`python3 is needed for the HTTP tool tests (install python3): ${err.message}`));
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the Python tool server exited (code ${code}): ${stderr}`));
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      const match = /PORT (\d+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

export interface NodeServer {
  url: string;
  server: Server;
  stop(): Promise<void>;
}

/** A real HTTP server on a free port of 127.0.0.1 around `handler`; an async handler that fails answers 500. */
export async function startNodeServer(handler: (req: IncomingMessage, res: ServerResponse) => unknown): Promise<NodeServer> {
  const server = createServer((req, res) => {
    const handled = handler(req, res);
    if (handled instanceof Promise) {
      handled.catch((err: unknown) => {
        if (!res.headersSent) res.statusCode = 500;
        res.end(String(err));
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How many /slow requests toolport abandoned (their connection closed before the late answer). */
export const slowRequests = { started: 0, abandoned: 0 };

/** The Node upstream of the fault cases: each path misbehaves in one way. */
export function faultHandler(req: IncomingMessage, res: ServerResponse): void {
  req.resume();
  req.on('end', () => {
    switch (req.url) {
      case '/slow':
        // Answers long after any test deadline; the call must be cut off and this socket closed.
        slowRequests.started++;
        res.on('close', () => {
          if (!res.writableFinished) slowRequests.abandoned++;
        });
        setTimeout(() => {
          if (!res.destroyed) res.end('{"late":true}');
        }, 10_000).unref();
        return;
      case '/reset':
        req.socket.destroy();
        return;
      case '/invalid-json':
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"this is": not json');
        return;
      case '/huge': {
        // 50 MB of JSON, written as fast as the reader takes it.
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(1024 * 1024, 'a');
        let sent = 0;
        res.write('{"blob":"');
        const pump = (): void => {
          while (sent < 50) {
            sent++;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end('"}');
        };
        res.on('error', () => {});
        pump();
        return;
      }
      case '/redirect':
        res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end();
        return;
      default:
        res.writeHead(404).end();
    }
  });
}

const FLAKY_SERVER = fileURLToPath(new URL('../fixtures/upstreams/flaky-server.mjs', import.meta.url));

/** test/fixtures/upstreams/flaky-server.mjs as a child process: an endpoint that fails, hangs or answers slowly on command. */
export interface FlakyServer {
  /** Its origin; the tool is at `${url}/tool`. */
  url: string;
  child: Child;
  mode(mode: 'ok' | 'fail' | 'hang', delayMs?: number): Promise<void>;
  /** What reached it: calls, calls in flight now, and the most in flight at once since the last reset. */
  stats(): Promise<{ calls: number; in_flight: number; max_in_flight: number }>;
  resetStats(): Promise<void>;
}

export async function startFlakyServer(): Promise<FlakyServer> {
  const [port] = await freePorts(1);
  const child = startChild('flaky-server', process.execPath, [FLAKY_SERVER], { cwd: process.cwd(), env: { ...process.env, PORT: String(port) } });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, 'its HTTP port', http200(`${url}/stats`));
  const control = async (path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, { method: body === undefined ? 'GET' : 'POST', body: body === undefined ? null : JSON.stringify(body) });
    return (await res.json()) as Record<string, any>;
  };
  return {
    url,
    child,
    mode: async (mode, delayMs = 0) => void (await control('/mode', { mode, delay_ms: delayMs })),
    stats: async () => (await control('/stats')) as { calls: number; in_flight: number; max_in_flight: number },
    resetStats: async () => void (await control('/stats/reset', {})),
  };
}
