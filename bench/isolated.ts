// `npm run bench:isolated`: the extra CPU of an isolated call (`isolation: 'worker'`) over the same
// call in process, in one toolport (memory store), the two alternating slice by slice, as fast as
// it goes and at a fixed 2,000 calls/s. CPU is the whole server process's (worker threads included).
// Env: BENCH_ROUNDS (default 6), BENCH_SLICE (seconds per slice, default 1.5); any other variable
// reaches the server as it is.
import { setTimeout as sleep } from 'node:timers/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { readdirSync, readFileSync } from 'node:fs';
import { http200, startChild, stopAll, waitUntilReady } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { cpuUsPerRequest, load } from './lib/load.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const SLICE_SECONDS = Number(process.env.BENCH_SLICE ?? 1.5);
const CONNECTIONS = 32;
const RATE = 2000;
const PAUSE_MS = Number(process.env.BENCH_PAUSE_MS ?? 250);

const body = (name: string) => JSON.stringify({ name, arguments: { text: 'hi' } });
const VARIANTS = [
  { name: 'in process, as fast as it goes', tool: 'echo' },
  { name: 'isolated, as fast as it goes', tool: 'echo_isolated' },
  { name: 'in process, 2,000 calls/s', tool: 'echo', rate: RATE },
  { name: 'isolated, 2,000 calls/s', tool: 'echo_isolated', rate: RATE },
] as const;

/** CPU ticks per thread kind (the main thread, worker threads, V8's helpers, the rest) of a process so far. */
function threadTicks(pid: number): Map<string, number> {
  const by = new Map<string, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended meanwhile
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const kind = tid === String(pid) ? 'main' : comm === 'WorkerThread' ? 'workers' : comm === 'V8Worker' ? 'V8 helpers' : 'other';
    by.set(kind, (by.get(kind) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  return by;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const [port] = (await freePorts(1)) as [number];
  const env = toolportEnv(port);
  const child = startChild('toolport (memory store)', process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, 'GET /healthz → 200', http200(`${base}/healthz`), 120_000);
  const pid = child.proc.pid!;
  const options = (tool: string, rate?: number) => ({
    url: `${base}/tools/invoke`,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json' },
    body: body(tool),
    connections: CONNECTIONS,
    ...(rate !== undefined && { overallRate: rate }),
  });
  for (const v of VARIANTS) await load({ ...options(v.tool, 'rate' in v ? v.rate : undefined), duration: 2 });

  const cpu = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
  const rates = new Map<string, number[]>(VARIANTS.map((v) => [v.name, []]));
  const split = new Map<string, number>();
  const calls = new Map<string, number>();
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of VARIANTS) {
      await sleep(PAUSE_MS);
      const before = threadTicks(pid);
      const run = await load({ ...options(v.tool, 'rate' in v ? v.rate : undefined), duration: SLICE_SECONDS }, undefined, pid);
      if (run.non2xx > 0 || run.errors > 0) throw new Error(`${v.name}: ${run.non2xx} non-2xx, ${run.errors} errors`);
      cpu.get(v.name)!.push(cpuUsPerRequest(run));
      for (const [kind, ticks] of threadTicks(pid)) {
        const key = `${v.name}\t${kind}`;
        split.set(key, (split.get(key) ?? 0) + ticks - (before.get(kind) ?? 0));
      }
      calls.set(v.name, (calls.get(v.name) ?? 0) + run.requests);
      rates.get(v.name)!.push(run.reqPerSec);
    }
  }
  const load1 = loadavg()[0]!.toFixed(2);
  console.log(`load average (1 min) at the end: ${load1}; ${ROUNDS} rounds of ${SLICE_SECONDS} s slices`);
  for (const v of VARIANTS) {
    const us = cpu.get(v.name)!;
    console.log(
      `${v.name.padEnd(32)} CPU/call median ${median(us).toFixed(1).padStart(6)} µs  [${us.map((x) => x.toFixed(0)).join(' ')}]  ${median(rates.get(v.name)!).toFixed(0)} req/s`,
    );
  }
  for (const v of VARIANTS) {
    const parts = ['main', 'workers', 'V8 helpers', 'other'].map(
      (kind) => `${kind} ${(((split.get(`${v.name}\t${kind}`) ?? 0) * 1e4) / calls.get(v.name)!).toFixed(1)}`,
    );
    console.log(`${v.name.padEnd(32)} µs/call by thread (10 ms ticks): ${parts.join(', ')}`);
  }
  // The extra CPU per round (isolated − in process, same round), then its median.
  for (const [inProcess, isolated] of [
    [VARIANTS[0].name, VARIANTS[1].name],
    [VARIANTS[2].name, VARIANTS[3].name],
  ] as const) {
    const a = cpu.get(inProcess)!;
    const b = cpu.get(isolated)!;
    const extra = b.map((x, i) => x - a[i]!);
    console.log(`extra CPU of ${isolated.padEnd(30)} median +${median(extra).toFixed(1)} µs  [${extra.map((x) => x.toFixed(0)).join(' ')}]`);
  }
}

try {
  await main();
} finally {
  await stopAll();
}
process.exit(0);
