// `npm run bench:mcp`: an upstream MCP tool called through toolport's /mcp against calling the
// upstream directly, both over Streamable HTTP, the same SDK server's tool over stdio (sdk-stdio.mjs),
// and a native in-process tool on toolport's /mcp. Exits 1 when toolport's CPU per forwarded call
// passes 2× its CPU per native call run alike (Streamable HTTP, see below) or 1.5× (stdio).
// The upstream is the official SDK's stateless server of bench/sdk-stateless.ts (its `echo` tool), or
// with BENCH_UPSTREAM=everything the reference server-everything (slower: an event store per session).
// Each row's CPU time per call
// is read from /proc/<pid>/stat (user + system) of each server process over the measured slices;
// rows alternate in slices so that the machine's drift hits them alike.
// A forwarded Streamable HTTP call runs at the rate the SDK upstream allows (a few hundred a second:
// it spends about 1 ms of CPU per call), a tenth of the native row's, and a process's CPU per call
// grows as its rate falls and as its neighbours keep the cores busy (measured here: the same native
// call costs 2–2.5× its full-speed CPU at 300 calls/s). So each Streamable HTTP row is judged against
// a native row run alike: at the rate the forwarded row reached in its last slice, while the same
// upstream is called directly at that rate beside it (the machine carries the same load); the ratio
// to the native call as fast as it goes is printed for reading.
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
  /** The processes whose CPU is read: toolport and the row's upstream. */
  pids: { toolport: number; upstream: number };
  /** Served requests, seconds, and CPU seconds of each watched process over the measured slices. */
  requests: number;
  seconds: number;
  cpu: { toolport: number; upstream: number };
  /** Run at the rate the named row reached in its last slice (autocannon overallRate), not as fast as it goes. */
  rateOf?: string;
  /** Loaded at the same rate while the row is measured: the upstream, called directly, as busy as under the forwarded row. */
  alongside?: { url: string; headers: Record<string, string>; body: string };
  /** req/s of the last slice. */
  lastRate?: number;
}

/** `json`: the SDK's stateless server answering JSON (`enableJsonResponse`) instead of SSE. */
async function startUpstream(port: number, json = false): Promise<Child> {
  const args = UPSTREAM === 'sdk' || json ? ['--import', 'tsx', 'bench/sdk-stateless.ts'] : [EVERYTHING, 'streamableHttp'];
  const env = { ...process.env, PORT: String(port), SDK_JSON: json ? '1' : '0' };
  const child = startChild(`upstream (${json ? 'sdk, JSON answers' : UPSTREAM})`, process.execPath, args, { cwd: ROOT, env });
  await waitUntilReady(
    child,
    'its HTTP port',
    async () => (await fetch(`http://127.0.0.1:${port}/mcp`, { signal: AbortSignal.timeout(1000) })).status > 0,
    60_000,
  );
  return child;
}

async function startToolport(port: number, upstreamUrl: string, jsonUrl: string): Promise<Child> {
  const folder = mkdtempSync(path.join(tmpdir(), 'toolport-bench-mcp-'));
  const toolsFile = path.join(folder, 'tools.json');
  const stdio = { source: 'io', command: process.execPath, args: [path.join(ROOT, 'bench/sdk-stdio.mjs')] };
  writeFileSync(toolsFile, JSON.stringify({ mcp: [{ source: 'up', url: upstreamUrl }, { source: 'upj', url: jsonUrl }, stdio] }));
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

async function slice(row: Row, seconds: number, overallRate?: number): Promise<LoadResult> {
  const before = { toolport: cpuSeconds(row.pids.toolport), upstream: cpuSeconds(row.pids.upstream) };
  const options = { url: row.url, method: 'POST' as const, headers: row.headers, body: row.body, connections: CONNECTIONS, duration: seconds };
  const beside =
    row.alongside === undefined || overallRate === undefined
      ? null
      : load({ ...row.alongside, method: 'POST', connections: CONNECTIONS, duration: seconds, overallRate });
  const result = await load(overallRate === undefined ? options : { ...options, overallRate });
  await beside;
  row.lastRate = result.reqPerSec;
  row.cpu.toolport += cpuSeconds(row.pids.toolport) - before.toolport;
  row.cpu.upstream += cpuSeconds(row.pids.upstream) - before.upstream;
  return result;
}

const FORWARDED = 'through toolport /mcp: tools/call up_echo (Streamable HTTP)';
const FORWARDED_JSON = 'through toolport /mcp: tools/call upj_echo (Streamable HTTP, stateless SDK server answering JSON)';
const STDIO = 'through toolport /mcp: tools/call io_echo (stdio, the same SDK server)';
const NATIVE = 'toolport /mcp native in-process echo';
const NATIVE_ALIKE = 'toolport /mcp native echo alike the Streamable HTTP (SSE) row: its rate, its upstream as busy';
const NATIVE_ALIKE_JSON = 'toolport /mcp native echo alike the Streamable HTTP (JSON) row: its rate, its upstream as busy';

async function main(): Promise<void> {
  const [upstreamPort, jsonPort, toolportPort] = (await freePorts(3)) as [number, number, number];
  const upstreamUrl = `http://127.0.0.1:${upstreamPort}/mcp`;
  const jsonUrl = `http://127.0.0.1:${jsonPort}/mcp`;
  const upstream = await startUpstream(upstreamPort);
  const jsonUpstream = await startUpstream(jsonPort, true);
  const toolport = await startToolport(toolportPort, upstreamUrl, jsonUrl);
  const sse = { toolport: toolport.proc.pid!, upstream: upstream.proc.pid! };
  const json = { toolport: toolport.proc.pid!, upstream: jsonUpstream.proc.pid! };
  // server-everything keeps sessions; the stateless SDK server needs none.
  const directHeaders = UPSTREAM === 'everything' ? { ...MCP_HEADERS, 'mcp-session-id': await upstreamSession(upstreamUrl) } : MCP_HEADERS;
  const args = UPSTREAM === 'everything' ? { message: 'hi' } : { text: 'hi' };
  const toolportMcp = `http://127.0.0.1:${toolportPort}/mcp`;
  const echo = call('echo', { text: 'hi' });
  const rows: Row[] = [
    { name: `upstream (${UPSTREAM}) directly: tools/call echo`, url: upstreamUrl, headers: directHeaders, body: call('echo', args), pids: sse },
    { name: FORWARDED, url: toolportMcp, headers: MCP_HEADERS, body: call('up_echo', args), pids: sse },
    { name: 'upstream (stateless SDK server answering JSON) directly: tools/call echo', url: jsonUrl, headers: MCP_HEADERS, body: echo, pids: json },
    { name: FORWARDED_JSON, url: toolportMcp, headers: MCP_HEADERS, body: call('upj_echo', { text: 'hi' }), pids: json },
    { name: STDIO, url: toolportMcp, headers: MCP_HEADERS, body: call('io_echo', { text: 'hi' }), pids: sse },
    { name: NATIVE, url: toolportMcp, headers: MCP_HEADERS, body: echo, pids: sse },
    // The Streamable HTTP rows' measure (see the top of this file): native calls at the forwarded row's rate, its upstream as busy.
    {
      name: NATIVE_ALIKE,
      url: toolportMcp,
      headers: MCP_HEADERS,
      body: echo,
      pids: sse,
      rateOf: FORWARDED,
      alongside: { url: upstreamUrl, headers: directHeaders, body: call('echo', args) },
    },
    {
      name: NATIVE_ALIKE_JSON,
      url: toolportMcp,
      headers: MCP_HEADERS,
      body: echo,
      pids: json,
      rateOf: FORWARDED_JSON,
      alongside: { url: jsonUrl, headers: MCP_HEADERS, body: echo },
    },
  ].map((r) => ({ ...r, requests: 0, seconds: 0, cpu: { toolport: 0, upstream: 0 } }));

  for (const row of rows) {
    const check = await fetch(row.url, { method: 'POST', headers: row.headers, body: row.body });
    const text = await check.text();
    if (check.status !== 200 || text.includes('"isError":true') || !text.includes('"result"'))
      throw new Error(`${row.name}: not answered: ${check.status} ${text.slice(0, 300)}`);
    await slice(row, 2); // warm-up, discarded below
    row.cpu = { toolport: 0, upstream: 0 };
  }
  for (let elapsed = 0; elapsed < DURATION; elapsed += SLICE_SECONDS) {
    for (const row of rows) {
      const paced = row.rateOf === undefined ? undefined : Math.max(1, Math.round(rows.find((r) => r.name === row.rateOf)!.lastRate ?? 1));
      const result = await slice(row, SLICE_SECONDS, paced);
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${row.name}: ${result.non2xx} non-2xx, ${result.errors} errors`);
      row.requests += result.requests;
      row.seconds += result.seconds;
      await sleep(PAUSE_MS);
    }
  }

  const perCallUs = (row: Row) => (row.cpu.toolport / row.requests) * 1e6;
  const table = rows.map((row) => ({
    row: row.name,
    'req/s': Math.round(row.requests / row.seconds),
    'toolport CPU µs/call': Math.round(perCallUs(row)),
    'upstream CPU µs/call': Math.round((row.cpu.upstream / row.requests) * 1e6),
  }));
  console.table(table);
  const byName = (name: string) => rows.find((r) => r.name === name)!;
  const nativeUs = perCallUs(byName(NATIVE));
  const targets = [
    {
      name: 'over Streamable HTTP (stateless SDK server, SSE answers) / per native call alike',
      ratio: perCallUs(byName(FORWARDED)) / perCallUs(byName(NATIVE_ALIKE)),
      max: 2,
    },
    {
      name: 'over Streamable HTTP (stateless SDK server, JSON answers) / per native call alike',
      ratio: perCallUs(byName(FORWARDED_JSON)) / perCallUs(byName(NATIVE_ALIKE_JSON)),
      max: 2,
    },
    { name: 'over stdio / per native call', ratio: perCallUs(byName(STDIO)) / nativeUs, max: 1.5 },
  ];
  for (const t of targets) console.log(`toolport's CPU per call ${t.name}: ${t.ratio.toFixed(2)} (target ≤ ${t.max}: ${t.ratio <= t.max ? 'met' : 'NOT met'})`);
  const fullSpeed = { sse: perCallUs(byName(FORWARDED)) / nativeUs, json: perCallUs(byName(FORWARDED_JSON)) / nativeUs };
  console.log(
    `(for reading: over Streamable HTTP / per native call as fast as it goes: SSE ${fullSpeed.sse.toFixed(2)}, JSON ${fullSpeed.json.toFixed(2)}; not a target)`,
  );
  const rate = (row: Row) => row.requests / row.seconds;
  console.log(
    `req/s through toolport / directly: SSE ${(rate(byName(FORWARDED)) / rate(rows[0]!)).toFixed(2)}, JSON ${(rate(byName(FORWARDED_JSON)) / rate(rows[2]!)).toFixed(2)}`,
  );
  mkdirSync(resultsDir(), { recursive: true });
  const file = path.join(resultsDir(), `${new Date().toISOString().replace(/:/g, '-')}-mcp-upstream.json`);
  const summary = { at: new Date().toISOString(), upstream: UPSTREAM, connections: CONNECTIONS, durationS: DURATION, rows: table, targets, fullSpeed };
  writeFileSync(file, `${JSON.stringify(summary, null, 2)}\n`);
  console.log(`saved ${path.relative(ROOT, file)}`);
  if (targets.some((t) => !(t.ratio <= t.max))) process.exitCode = 1;
}

try {
  await main();
} finally {
  await stopAll();
}
