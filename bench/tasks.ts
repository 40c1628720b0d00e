// `npm run bench:tasks`: what a task costs beside the synchronous call it wraps. Starts toolport
// (memory store, and Redis store on a throwaway redis-server) as children and, with 32 concurrent
// closed-loop clients each, measures:
//   sync        POST /tools/invoke (echo), answered when done
//   task start  POST /tools/invoke with Prefer: respond-async: the 202
//   task trip   the 202, then GET /tasks/{id}?wait_ms=30000 until it answers the completed task
// For each: operations/s and the server process's CPU per operation (utime+stime from /proc/<pid>/stat
// over the measured time). Env: BENCH_DURATION (seconds per row, default 10), BENCH_ONLY (memory,redis).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { http200, startChild, stopAll, waitUntilReady, type Child } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const CONCURRENCY = 32;
const WARMUP_MS = 2000;
/** Clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;
const DURATION_MS = Number(process.env.BENCH_DURATION ?? 10) * 1000;
const JSON_HEADERS = { 'content-type': 'application/json' };
const CALL = JSON.stringify({ name: 'echo', arguments: { text: 'hello' } });

async function cpuMs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces) start at state; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
}

async function expectStatus(response: Response, status: number): Promise<string> {
  const text = await response.text();
  if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${text.slice(0, 300)}`);
  return text;
}

type Operation = (base: string) => Promise<void>;

const OPERATIONS: Record<string, Operation> = {
  sync: async (base) => {
    await expectStatus(await fetch(`${base}/tools/invoke`, { method: 'POST', headers: JSON_HEADERS, body: CALL }), 200);
  },
  'task start (202)': async (base) => {
    await expectStatus(await fetch(`${base}/tools/invoke`, { method: 'POST', headers: { ...JSON_HEADERS, prefer: 'respond-async' }, body: CALL }), 202);
  },
  'task round trip': async (base) => {
    const accepted = JSON.parse(
      await expectStatus(await fetch(`${base}/tools/invoke`, { method: 'POST', headers: { ...JSON_HEADERS, prefer: 'respond-async' }, body: CALL }), 202),
    ) as { task_id: string };
    const done = JSON.parse(await expectStatus(await fetch(`${base}/tasks/${accepted.task_id}?wait_ms=30000`), 200)) as { status: string };
    if (done.status !== 'completed') throw new Error(`the task ended ${done.status}`);
  },
};

/** Runs `operation` in CONCURRENCY closed loops for `ms`; answers how many completed. */
async function loop(operation: Operation, base: string, ms: number): Promise<number> {
  const until = Date.now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (Date.now() < until) {
        await operation(base);
        done++;
      }
    }),
  );
  return done;
}

interface Row {
  store: string;
  operation: string;
  perSecond: number;
  cpuMsPerOp: number;
}

async function measure(store: string, child: Child, base: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const [name, operation] of Object.entries(OPERATIONS)) {
    await loop(operation, base, WARMUP_MS);
    const cpuBefore = await cpuMs(child.proc.pid!);
    const started = performance.now();
    const count = await loop(operation, base, DURATION_MS);
    const seconds = (performance.now() - started) / 1000;
    const cpu = (await cpuMs(child.proc.pid!)) - cpuBefore;
    rows.push({ store, operation: name, perSecond: count / seconds, cpuMsPerOp: cpu / count });
    console.error(`${store} ${name}: ${(count / seconds).toFixed(0)}/s, ${(cpu / count).toFixed(3)} ms CPU each`);
  }
  return rows;
}

async function startToolport(name: string, port: number, redisUrl: string | null): Promise<{ child: Child; base: string }> {
  const env = toolportEnv(port, redisUrl !== null ? { REDIS_URL: redisUrl } : {});
  const child = startChild(`toolport (${name})`, process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, 'GET /healthz → 200', http200(`${base}/healthz`));
  return { child, base };
}

async function main(): Promise<void> {
  const only = (process.env.BENCH_ONLY ?? 'memory,redis').split(',').map((s) => s.trim());
  const [memoryPort, redisToolportPort, redisPort] = (await freePorts(3)) as [number, number, number];
  const rows: Row[] = [];
  try {
    if (only.includes('memory')) {
      const { child, base } = await startToolport('memory', memoryPort, null);
      rows.push(...(await measure('memory', child, base)));
    }
    if (only.includes('redis')) {
      await startRedis(redisPort, ROOT);
      const { child, base } = await startToolport('redis', redisToolportPort, `redis://127.0.0.1:${redisPort}/0`);
      rows.push(...(await measure('redis', child, base)));
    }
  } finally {
    await stopAll();
  }
  console.log(`\n${CONCURRENCY} concurrent clients, ${DURATION_MS / 1000} s per row, server CPU from /proc\n`);
  console.log('| store | operation | per second | server CPU per operation (ms) |');
  console.log('| --- | --- | ---: | ---: |');
  for (const row of rows) console.log(`| ${row.store} | ${row.operation} | ${row.perSecond.toFixed(0)} | ${row.cpuMsPerOp.toFixed(3)} |`);
}

await main();
