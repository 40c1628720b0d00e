// `npm run bench:tracing`: what tracing costs. Starts toolport (memory store, the bench `echo`
// tool) with tracing off and with tracing on (every request sampled, exported over OTLP/HTTP to a
// sink process), and — with BENCH_BASELINE_DIR=<another checkout> — that checkout's
// toolport as the "before" row. Load alternates between the servers in 1 s slices (the machines
// drift); each server's CPU time (utime + stime from /proc/<pid>/stat) over its slices, divided
// by the requests it answered, is its CPU per request. Env: BENCH_DURATION (s per server, default 10).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { http200, startChild, stopAll, waitUntilReady, type Child } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { load } from './lib/load.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const SLICE_SECONDS = 1;
const CONNECTIONS = 16;
const CLOCK_TICKS = 100; // USER_HZ on Linux
const SINK = `let bytes = 0;
require('node:http').createServer((request, response) => {
  request.on('data', (chunk) => (bytes += chunk.length));
  request.on('end', () => (request.url === '/bytes' ? response.end(String(bytes)) : response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()));
}).listen(Number(process.env.PORT), '127.0.0.1');`;

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

interface Server {
  name: string;
  url: string;
  child: Child;
  requests: number;
  cpu: number;
  non2xx: number;
}

async function startToolport(name: string, root: string, port: number, env: NodeJS.ProcessEnv): Promise<Server> {
  const childEnv = toolportEnv(port, env);
  delete childEnv.REDIS_URL;
  for (const key of Object.keys(childEnv)) if (key.startsWith('OTEL_') && !(key in env)) delete childEnv[key];
  const child = startChild(name, process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: root, env: childEnv });
  const url = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, 'GET /healthz → 200', http200(`${url}/healthz`), 90_000);
  return { name, url, child, requests: 0, cpu: 0, non2xx: 0 };
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION ?? 10);
  const [offPort, onPort, unsampledPort, basePort, sinkPort] = (await freePorts(5)) as [number, number, number, number, number];
  const servers: Server[] = [];
  try {
    // The trace sink, a process of its own like a collector (this one runs the load): answers every
    // export 200 (an empty ExportTraceServiceResponse) and counts the bytes it got.
    const sink = startChild('trace sink', process.execPath, ['-e', SINK], { cwd: ROOT, env: { ...process.env, PORT: String(sinkPort) } });
    const endpoint = `http://127.0.0.1:${sinkPort}`;
    await waitUntilReady(sink, 'GET /bytes → 200', http200(`${endpoint}/bytes`));
    const baselineDir = process.env.BENCH_BASELINE_DIR;
    if (baselineDir) servers.push(await startToolport('before (BENCH_BASELINE_DIR)', path.resolve(baselineDir), basePort, {}));
    servers.push(await startToolport('tracing off', ROOT, offPort, {}));
    servers.push(await startToolport('tracing on (always_on)', ROOT, onPort, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_on' }));
    // The SDK and its context propagation running, no span recorded: what tracing costs before any span.
    servers.push(
      await startToolport('tracing on (always_off)', ROOT, unsampledPort, { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'always_off' }),
    );
    const body = JSON.stringify({ id: 'call_1', name: 'echo', arguments: { text: 'hello' } });
    const headers = { 'content-type': 'application/json', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' };
    const request = (server: Server, duration: number) =>
      load({ url: `${server.url}/tools/invoke`, method: 'POST', headers, body, connections: CONNECTIONS, duration });
    for (const server of servers) await request(server, 2); // warm-up
    for (let slice = 0; slice < seconds / SLICE_SECONDS; slice++) {
      for (const server of slice % 2 === 0 ? servers : [...servers].reverse()) {
        const before = cpuSeconds(server.child.proc.pid!);
        const result = await request(server, SLICE_SECONDS);
        server.cpu += cpuSeconds(server.child.proc.pid!) - before;
        server.requests += result.requests;
        server.non2xx += result.non2xx + result.errors;
      }
    }
    const off = servers.find((s) => s.name === 'tracing off')!;
    const perRequest = (s: Server) => (s.cpu / s.requests) * 1e6;
    console.log(`POST /tools/invoke (one echo call, traceparent sent), ${CONNECTIONS} connections, ${seconds} s per server in ${SLICE_SECONDS} s slices`);
    console.log('server                          req/s    CPU µs/request   vs tracing off   non-2xx');
    for (const s of servers) {
      const ratio = perRequest(s) / perRequest(off);
      console.log(
        `${s.name.padEnd(30)} ${(s.requests / seconds).toFixed(0).padStart(6)}   ${perRequest(s).toFixed(1).padStart(14)}   ${`${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)} %`.padStart(14)}   ${String(s.non2xx).padStart(7)}`,
      );
    }
    console.log(`OTLP bytes exported: ${await (await fetch(`${endpoint}/bytes`)).text()}`);
  } finally {
    await stopAll();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
