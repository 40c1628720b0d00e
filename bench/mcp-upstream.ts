// `npm run bench:mcp`: an upstream MCP tool called through toolport's /mcp against calling the
// upstream directly, both over Streamable HTTP, the same SDK server's tool over stdio (sdk-stdio.mjs),
// and a native in-process tool on toolport's /mcp. Exits 1 when toolport's CPU per forwarded call
// passes 2× (Streamable HTTP) or 1.5× (stdio) its CPU per native call.
// The upstream is the official SDK's stateless server of bench/sdk-stateless.ts (its `echo` tool), or
// with BENCH_UPSTREAM=everything the reference server-everything (slower: an event store per session).
// Each row's CPU time per call
// is read from /proc/<pid>/stat (user + system) of each server process over the measured slices;
// rows alternate in slices so that the machine's drift hits them alike.
// Env: BENCH_DURATION (seconds per row, default 10), BENCH_CONNECTIONS (default 16).
import { mkdirSync, readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { startChild, stopAll, waitUntilReady, type Child } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { load, type LoadResult } from './lib/load.js';
import { resultsDir } from './lib/results.js';

const ROOT = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const SLICE_SECONDS = 1;
const PAUSE_MS = 300;
const TICKS_PER_SECOND = 100; // USER_HZ on Linux
const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);
const PROTOCOL = '2025-11-25';
const UPSTREAM = process.env.BENCH_UPSTREAM ?? 'sdk';
if (UPSTREAM !== 'sdk' && UPSTREAM !== 'everything') throw new Error(`BENCH_UPSTREAM must be sdk or everything, got "${UPSTREAM}"`);
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': PROTOCOL };

/** CPU seconds (user + system) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND; // utime, stime
}

function call(name: string, args: Record<string, unknown>): string {
  return JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
}

interface Row {
  name: string;
  url: string;
  headers: Record<string, string>;
  body: string;
  /** Served requests, seconds, and CPU seconds of each watched process over the measured slices. */
  requests: number;
  seconds: number;
  cpu: { toolport: number; upstream: number };
  /** Run at the rate the named row reached in its last slice (autocannon overallRate), not as fast as it goes. */
  rateOf?: string;
  /** req/s of the last slice. */
  lastRate?: number;
}

async function startUpstream(port: number): Promise<Child> {
  const args = UPSTREAM === 'sdk' ? ['--import', 'tsx', 'bench/sdk-stateless.ts'] : [EVERYTHING, 'streamableHttp'];
  const child = startChild(`upstream (${UPSTREAM})`, process.execPath, args, { cwd: ROOT, env: { ...process.env, PORT: String(port) } });
  await waitUntilReady(
    child,
    'its HTTP port',
    async () => (await fetch(`http://127.0.0.1:${port}/mcp`, { signal: AbortSignal.timeout(1000) })).status > 0,
    60_000,
  );
  return child;
}

async function startToolport(port: number, upstreamUrl: string): Promise<Child> {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolport-bench-mcp-'));
  const toolsFile = path.join(folder, 'tools.json');
  const stdio = { source: 'io', command: process.execPath, args: [path.join(ROOT, 'bench/sdk-stdio.mjs')] };
  writeFileSync(toolsFile, JSON.stringify({ mcp: [{ source: 'up', url: upstreamUrl }, stdio] }));
  const env = { ...process.env, PORT: String(port), LOG_LEVEL: 'warn', TOOLS_FILE: toolsFile, TOOL_PLUGINS: 'bench/plugins/bench-tools.ts' };
  const child = startChild('toolport', process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env });
  await waitUntilReady(
    child,
    'GET /readyz → 200',
    async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { upstreams_down?: unknown };
      return res.status === 200 && body.upstreams_down === undefined;
    },
    120_000,
  ); // a loaded machine starts tsx slowly
  return child;
}

/** An MCP session with the upstream, as a client has after the handshake. */
async function upstreamSession(url: string): Promise<string> {
  const init = await fetch(url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'bench', version: '1' } },
    }),
  });
  const session = init.headers.get('mcp-session-id');
  await init.text();
  if (session === null) throw new Error('the upstream gave no Mcp-Session-Id');
  const headers = { ...MCP_HEADERS, 'mcp-session-id': session };
  await (await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) })).text();
  return session;
}

async function slice(row: Row, seconds: number, pids: { toolport: number; upstream: number }, overallRate?: number): Promise<LoadResult> {
  const before = { toolport: cpuSeconds(pids.toolport), upstream: cpuSeconds(pids.upstream) };
  const options = { url: row.url, method: 'POST' as const, headers: row.headers, body: row.body, connections: CONNECTIONS, duration: seconds };
  const result = await load(overallRate === undefined ? options : { ...options, overallRate });
  row.lastRate = result.reqPerSec;
  row.cpu.toolport += cpuSeconds(pids.toolport) - before.toolport;
  row.cpu.upstream += cpuSeconds(pids.upstream) - before.upstream;
  return result;
}

async function main(): Promise<void> {
  const [upstreamPort, toolportPort] = (await freePorts(2)) as [number, number];
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;
  const upstream = await startUpstream(upstreamPort);
  const toolport = await startToolport(toolportPort, upstreamUrl);
  const pids = { toolport: toolport.proc.pid!, upstream: upstream.proc.pid! };
  // server-everything keeps sessions; the stateless SDK server needs none.
  const directHeaders = UPSTREAM === 'everything' ? { ...MCP_HEADERS, 'mcp-session-id': await upstreamSession(upstreamUrl) } : MCP_HEADERS;
  const args = UPSTREAM === 'everything' ? { message: 'hi' } : { text: 'hi' };
  const toolportMcp = `http://127.0.0.1:${toolportPort}/mcp`;
  const rows: Row[] = [
    { name: `upstream (${UPSTREAM}) directly: tools/call echo`, url: upstreamUrl, headers: directHeaders, body: call('echo', args) },
    { name: 'through toolport /mcp: tools/call up_echo (Streamable HTTP)', url: toolportMcp, headers: MCP_HEADERS, body: call('up_echo', args) },
    {
      name: 'through toolport /mcp: tools/call io_echo (stdio, the same SDK server)',
      url: toolportMcp,
      headers: MCP_HEADERS,
      body: call('io_echo', { text: 'hi' }),
    },
    { name: 'toolport /mcp native in-process echo', url: toolportMcp, headers: MCP_HEADERS, body: call('echo', { text: 'hi' }) },
    // For reading the Streamable HTTP ratio: a process's CPU per call grows as its rate falls (fewer calls share each wake-up).
    {
      name: 'toolport /mcp native echo at the Streamable HTTP row’s rate',
      url: toolportMcp,
      headers: MCP_HEADERS,
      body: call('echo', { text: 'hi' }),
      rateOf: 'through toolport /mcp: tools/call up_echo (Streamable HTTP)',
    },
  ].map((r) => ({ ...r, requests: 0, seconds: 0, cpu: { toolport: 0, upstream: 0 } }));

  for (const row of rows) {
    const check = await fetch(row.url, { method: 'POST', headers: row.headers, body: row.body });
    const text = await check.text();
    if (check.status !== 200 || text.includes('"isError":true') || !text.includes('"result"'))
      throw new Error(`${row.name}: not answered: ${check.status} ${text.slice(0, 300)}`);
    await slice(row, 2, pids); // warm-up, discarded below
    row.cpu = { toolport: 0, upstream: 0 };
  }
  for (let elapsed = 0; elapsed < DURATION; elapsed += SLICE_SECONDS) {
    for (const row of rows) {
      const paced = row.rateOf === undefined ? undefined : Math.max(1, Math.round(rows.find((r) => r.name === row.rateOf)!.lastRate ?? 1));
      const result = await slice(row, SLICE_SECONDS, pids, paced);
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${row.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      row.requests += result.requests;
      row.seconds += result.seconds;
      await sleep(PAUSE_MS);
    }
  }

  const perCallUs = (cpu: number, requests: number) => (cpu / requests) * 1e6;
  const table = rows.map((row) => ({
    row: row.name,
    'req/s': Math.round(row.requests / row.seconds),
    'toolport CPU µs/call': Math.round(perCallUs(row.cpu.toolport, row.requests)),
    'upstream CPU µs/call': Math.round(perCallUs(row.cpu.upstream, row.requests)),
  }));
  console.table(table);
  const [direct, forwarded, stdioRow, native, nativePaced] = rows as [Row, Row, Row, Row, Row];
  const forwardedUs = perCallUs(forwarded.cpu.toolport, forwarded.requests);
  const stdioUs = perCallUs(stdioRow.cpu.toolport, stdioRow.requests);
  const nativeUs = perCallUs(native.cpu.toolport, native.requests);
  const ratio = forwardedUs / nativeUs;
  const stdioRatio = stdioUs / nativeUs;
  const verdict = (met: boolean) => (met ? 'met' : 'NOT met');
  console.log(`toolport's CPU per call over Streamable HTTP / per native call: ${ratio.toFixed(2)} (target ≤ 2: ${verdict(ratio <= 2)})`);
  console.log(`toolport's CPU per call over stdio / per native call: ${stdioRatio.toFixed(2)} (target ≤ 1.5: ${verdict(stdioRatio <= 1.5)})`);
  const pacedRatio = forwardedUs / perCallUs(nativePaced.cpu.toolport, nativePaced.requests);
  console.log(`(for reading: over Streamable HTTP / per native call at the same rate: ${pacedRatio.toFixed(2)}; not a target)`);
  console.log(`req/s through toolport / directly: ${(forwarded.requests / forwarded.seconds / (direct.requests / direct.seconds)).toFixed(2)}`);
  mkdirSync(resultsDir(), { recursive: true });
  const file = path.join(resultsDir(), `${new Date().toISOString().replace(/:/g, '-')}-mcp-upstream.json`);
  writeFileSync(
    file,
    `${JSON.stringify({ at: new Date().toISOString(), upstream: UPSTREAM, connections: CONNECTIONS, durationS: DURATION, rows: table, ratio, stdioRatio, pacedRatio }, null, 2)}\n`,
  );
  console.log(`saved ${path.relative(ROOT, file)}`);
  if (ratio > 2 || stdioRatio > 1.5) process.exitCode = 1;
}

try {
  await main();
} finally {
  await stopAll();
}
