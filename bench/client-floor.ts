// `npx tsx bench/client-floor.ts`: toolport's client side of a forwarded call against the floor
// undici sets, in one process (process.cpuUsage over each batch; rows alternate in rounds, medians
// printed). HTTP tools: a bare `dispatch` of the same POST with a handler that only parses the JSON,
// against UpstreamClient.send with the call's headers and resultOfAnswer (src/sources/upstream/),
// as fast as they go, at upstream-echo.ts. MCP: the same bare dispatch of a tools/call, against
// McpUpstream.callTool over the lean path (src/sources/mcp/http-call.ts), at the SDK's stateless
// server answering JSON (sdk-stateless.ts), at BENCH_RATE calls a second (the rate that server allows
// on a shared machine; the CPU per call of a process grows as its rate falls, so both rows share it).
// Env: BENCH_ROUNDS (default 5), BENCH_SECONDS (per row and round, default 2), BENCH_RATE (default 250).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import type { Dispatcher } from 'undici';
import { startChild, stopAll, waitUntilReady } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { resultOfAnswer } from '../src/sources/upstream/answer.ts';
import { UpstreamClient } from '../src/sources/upstream/client.ts';
import { McpUpstream } from '../src/sources/mcp/upstream.ts';
import { Cancellation } from '../src/tools/context.ts';
import type { ToolContext } from '../src/tools/types.ts';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const RATE = Number(process.env.BENCH_RATE ?? 250);
const IN_FLIGHT = 16;

/** Reads an answer whole and parses it: the least a client can do with it. */
class BareAnswer implements Dispatcher.DispatchHandler {
  readonly #chunks: Buffer[] = [];
  readonly #done: (err?: Error) => void;
  constructor(done: (err?: Error) => void) {
    this.#done = done;
  }
  onConnect(): void {}
  onHeaders(): boolean {
    return true;
  }
  onData(chunk: Buffer): boolean {
    this.#chunks.push(chunk);
    return true;
  }
  onComplete(): void {
    JSON.parse(Buffer.concat(this.#chunks).toString('utf8'));
    this.#done();
  }
  onError(err: Error): void {
    this.#done(err);
  }
}

function bare(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): Promise<void> {
  return new Promise((resolve, reject) => dispatcher.dispatch(options, new BareAnswer((err) => (err === undefined ? resolve() : reject(err)))));
}

/** µs of this process's CPU per call over `seconds`: as fast as `IN_FLIGHT` callers go, or at `rate` calls a second. */
async function cpuPerCall(call: () => Promise<unknown>, seconds: number, rate: number | null): Promise<number> {
  const until = Date.now() + seconds * 1000;
  const before = process.cpuUsage();
  let calls = 0;
  if (rate === null) {
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        for (; Date.now() < until; calls++) await call();
      }),
    );
  } else {
    const started = Date.now();
    const pending: Promise<unknown>[] = [];
    for (let sent = 0; Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 5)))
      for (; sent < ((Date.now() - started) / 1000) * rate; sent++) pending.push(call().then(() => calls++));
    await Promise.all(pending);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function compare(title: string, rows: Record<string, () => Promise<unknown>>, rate: number | null): Promise<void> {
  const results: Record<string, number[]> = Object.fromEntries(Object.keys(rows).map((name) => [name, []]));
  for (const call of Object.values(rows)) await cpuPerCall(call, 1, rate); // warm-up
  for (let round = 0; round < ROUNDS; round++) for (const [name, call] of Object.entries(rows)) results[name]!.push(await cpuPerCall(call, SECONDS, rate));
  console.log(`\n${title}${rate === null ? ', as fast as it goes' : `, at ${rate} calls/s`} (µs of CPU per call, median of ${ROUNDS})`);
  for (const [name, values] of Object.entries(results))
    console.log(`  ${name.padEnd(46)} ${median(values).toFixed(1).padStart(7)}   (${values.map((v) => v.toFixed(0)).join(', ')})`);
}

try {
  const [echoPort, sdkPort] = (await freePorts(2)) as [number, number];
  const tsx = (script: string) => ['--import', 'tsx', script];
  const echo = startChild('upstream echo', process.execPath, tsx('bench/upstream-echo.ts'), { cwd: ROOT, env: { ...process.env, PORT: String(echoPort) } });
  const sdk = startChild('SDK stateless server (JSON)', process.execPath, tsx('bench/sdk-stateless.ts'), {
    cwd: ROOT,
    env: { ...process.env, PORT: String(sdkPort), SDK_JSON: '1' },
  });
  for (const [child, port] of [
    [echo, echoPort],
    [sdk, sdkPort],
  ] as const)
    await waitUntilReady(
      child,
      'its HTTP port',
      async () => (await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1000) })).status > 0,
      60_000,
    );

  const client = new UpstreamClient();
  const echoOrigin = `http://127.0.0.1:${echoPort}`;
  const configured = { 'content-type': 'application/json', accept: 'application/json, text/plain;q=0.9, */*;q=0.1' };
  const context = { requestId: 'bench', deadline: Date.now() + 3_600_000, session: null, idempotencyKey: null } as unknown as ToolContext;
  const text = { text: 'hello from the benchmark' };
  await compare(
    'HTTP tool, client side',
    {
      'bare undici dispatch': () =>
        bare(client.dispatcher, { origin: echoOrigin, path: '/echo', method: 'POST', headers: configured, body: JSON.stringify(text) }),
      'UpstreamClient.send + resultOfAnswer': async () => {
        const request = {
          origin: echoOrigin,
          path: '/echo',
          method: 'POST' as const,
          headers: client.callHeaders(context, configured),
          body: JSON.stringify(text),
        };
        return resultOfAnswer('echo', await client.send({ ...request, maxResponseBytes: 1e7 }, new Cancellation()), 1e7);
      },
    },
    null,
  );

  const url = `http://127.0.0.1:${sdkPort}/mcp`;
  const server = { kind: 'http' as const, url, headers: {}, credentials: { auth: null, templated: [] }, uses: [] };
  const upstream = new McpUpstream(server, pino({ level: 'warn' }), '1', { listed: async () => {}, updated: () => {} }, client.dispatcher);
  await upstream.start();
  if (!upstream.up) throw new Error('the SDK server is not up');
  const progress = { progress() {}, elicit: () => Promise.reject(new Error('no')), sample: () => Promise.reject(new Error('no')) } as unknown as ToolContext;
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  let id = 0;
  await compare(
    'MCP tools/call over Streamable HTTP, client side',
    {
      'bare undici dispatch': () => {
        const body = `{"jsonrpc":"2.0","id":"b-${++id}","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},"_meta":{"progressToken":"b-${id}"}}}`;
        return bare(client.dispatcher, { origin: new URL(url).origin, path: '/mcp', method: 'POST', headers, body });
      },
      'McpUpstream.callTool (lean path)': () => upstream.callTool('echo', { text: 'hi' }, { end: new Cancellation(), deadline: Date.now() + 60_000, progress }),
    },
    RATE,
  );
  await upstream.close();
  await client.close();
} finally {
  await stopAll();
}
