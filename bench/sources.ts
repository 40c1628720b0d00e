// `npm run bench:sources`: an HTTP tool through toolport against calling its upstream directly,
// and against a native in-process tool. Children on free loopback ports: the upstream
// (upstream-echo.ts) and toolport (memory store) with the HTTP tool from a TOOLS_FILE and the
// native `echo` from plugins/bench-tools.ts. Rows alternate in rounds (direct, forwarded, native)
// so this shared machine's drift hits all alike; each row's figure is the median of its rounds.
// CPU per request is the toolport process's own (utime + stime from /proc/<pid>/stat) over the
// requests it served in that slice. Targets: toolport's CPU per forwarded call ≤ 1.5× its CPU per
// native call; forwarded req/s ≥ 0.45× direct req/s.
// Env: BENCH_DURATION (seconds per row, default 10), BENCH_ROUNDS (default 5).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { http200, startChild, stopAll, waitUntilReady, type Child } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { load, type LoadResult } from './lib/load.js';
import { resultsDir } from './lib/results.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
/** How long a child may take to start: tsx compiles slowly on a loaded machine. */
const START_TIMEOUT_MS = 120_000;
const ROOT = path.dirname(BENCH_DIR);
const CONNECTIONS = 32;
const CLOCK_TICKS_PER_S = 100; // Linux USER_HZ
const BODY = JSON.stringify({ text: 'hello from the benchmark' });

/** CPU seconds (user + system) the process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S; // utime, stime (fields 14, 15 of the line)
}

interface Measured extends LoadResult {
  /** toolport's CPU ms per served request (null for the direct row: toolport is not involved). */
  cpuMsPerRequest: number | null;
  upstreamCpuMsPerRequest: number;
}

async function measure(url: string, body: string, seconds: number, toolport: Child, upstream: Child): Promise<Measured> {
  const toolportBefore = cpuSeconds(toolport.proc.pid!);
  const upstreamBefore = cpuSeconds(upstream.proc.pid!);
  const run = await load({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body, connections: CONNECTIONS, duration: seconds });
  const toolportCpu = cpuSeconds(toolport.proc.pid!) - toolportBefore;
  const upstreamCpu = cpuSeconds(upstream.proc.pid!) - upstreamBefore;
  const perRequest = (cpu: number) => (run.requests === 0 ? Number.NaN : (cpu * 1000) / run.requests);
  return { ...run, cpuMsPerRequest: url.includes('/tools/') ? perRequest(toolportCpu) : null, upstreamCpuMsPerRequest: perRequest(upstreamCpu) };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function main(): Promise<void> {
  const seconds = Number(process.env.BENCH_DURATION ?? 10);
  const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
  const [upstreamPort, toolportPort] = (await freePorts(2)) as [number, number];
  const folder = mkdtempSync(path.join(tmpdir(), 'toolport-bench-sources-'));
  const toolsFile = path.join(folder, 'tools.yaml');
  writeFileSync(
    toolsFile,
    `http:\n  - name: echo_http\n    description: Echo the text back, over HTTP.\n    parameters: {type: object, properties: {text: {type: string}}, required: [text]}\n    endpoint: {url: "http://127.0.0.1:${upstreamPort}/echo"}\n`,
  );
  try {
    const tsx = (script: string) => ['--import', 'tsx', script];
    const upstream = startChild('upstream echo', process.execPath, tsx('bench/upstream-echo.ts'), {
      cwd: ROOT,
      env: { ...process.env, PORT: String(upstreamPort) },
    });
    const env = toolportEnv(toolportPort, { TOOLS_FILE: toolsFile });
    const toolport = startChild('toolport (memory store)', process.execPath, tsx('src/server.ts'), { cwd: ROOT, env });
    const toolportBase = `http://127.0.0.1:${toolportPort}`;
    await waitUntilReady(toolport, 'GET /healthz → 200', http200(`${toolportBase}/healthz`), START_TIMEOUT_MS);
    const rows = {
      direct: { url: `http://127.0.0.1:${upstreamPort}/echo`, body: BODY },
      forwarded: { url: `${toolportBase}/tools/echo_http/invoke`, body: BODY },
      native: { url: `${toolportBase}/tools/echo/invoke`, body: BODY },
    };
    // Warm-up: V8 optimises the hot paths, pools fill.
    for (const row of Object.values(rows))
      await load({ url: row.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: row.body, connections: CONNECTIONS, duration: 2 });
    const results: Record<keyof typeof rows, Measured[]> = { direct: [], forwarded: [], native: [] };
    for (let round = 0; round < rounds; round++) {
      for (const [name, row] of Object.entries(rows) as [keyof typeof rows, { url: string; body: string }][]) {
        const measured = await measure(row.url, row.body, seconds / rounds, toolport, upstream);
        if (measured.non2xx > 0 || measured.errors > 0) throw new Error(`${name}: ${measured.non2xx} non-2xx answers and ${measured.errors} errors`);
        results[name].push(measured);
      }
    }
    const summary = Object.fromEntries(
      Object.entries(results).map(([name, runs]) => [
        name,
        {
          reqPerSec: Math.round(median(runs.map((r) => r.reqPerSec))),
          toolportCpuMsPerRequest: runs[0]!.cpuMsPerRequest === null ? null : Number(median(runs.map((r) => r.cpuMsPerRequest!)).toFixed(4)),
          upstreamCpuMsPerRequest: Number(median(runs.map((r) => r.upstreamCpuMsPerRequest)).toFixed(4)),
          p50Ms: Number(median(runs.map((r) => r.p50Ms)).toFixed(3)),
          p99Ms: Number(median(runs.map((r) => r.p99Ms)).toFixed(3)),
        },
      ]),
    ) as Record<
      keyof typeof rows,
      { reqPerSec: number; toolportCpuMsPerRequest: number | null; upstreamCpuMsPerRequest: number; p50Ms: number; p99Ms: number }
    >;
    const cpuRatio = summary.forwarded.toolportCpuMsPerRequest! / summary.native.toolportCpuMsPerRequest!;
    const rateRatio = summary.forwarded.reqPerSec / summary.direct.reqPerSec;
    console.log(
      `\nHTTP tool through toolport vs direct (${CONNECTIONS} connections, ${rounds} rounds of ${(seconds / rounds).toFixed(1)} s per row, medians)\n`,
    );
    console.log('row        req/s    toolport CPU ms/req  upstream CPU ms/req  p50 ms   p99 ms');
    for (const [name, s] of Object.entries(summary)) {
      console.log(
        `${name.padEnd(10)} ${String(s.reqPerSec).padStart(6)}   ${(s.toolportCpuMsPerRequest?.toFixed(4) ?? '—').padStart(18)}   ${s.upstreamCpuMsPerRequest.toFixed(4).padStart(18)}   ${s.p50Ms.toFixed(2).padStart(6)}   ${s.p99Ms.toFixed(2).padStart(6)}`,
      );
    }
    console.log(`\ntoolport CPU per forwarded call / per native call: ${cpuRatio.toFixed(2)} (target ≤ 1.5: ${cpuRatio <= 1.5 ? 'met' : 'NOT met'})`);
    console.log(`forwarded req/s / direct req/s: ${rateRatio.toFixed(2)} (target ≥ 0.45: ${rateRatio >= 0.45 ? 'met' : 'NOT met'})`);
    const date = new Date().toISOString();
    const file = path.join(resultsDir(), `${date.replaceAll(':', '-')}-sources.json`);
    mkdirSync(path.dirname(file), { recursive: true });
    const machine = { cpus: cpus().length, model: cpus()[0]?.model ?? 'unknown', node: process.version };
    writeFileSync(
      file,
      `${JSON.stringify({ date, machine, connections: CONNECTIONS, seconds, rounds, summary, cpuRatio, rateRatio, runs: results }, null, 2)}\n`,
    );
    console.log(`saved ${path.relative(ROOT, file)}`);
    if (cpuRatio > 1.5 || rateRatio < 0.45) process.exitCode = 1;
  } finally {
    await stopAll();
    rmSync(folder, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
