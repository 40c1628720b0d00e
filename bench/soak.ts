// `npm run soak`: a bounded load run against one toolport (Redis store, loopback only) with its
// RSS and open file descriptors sampled every second. Stops by itself.
// Env: SOAK_SECONDS (default 300), SOAK_CALLS (stop after this many calls, default 1,000,000).
import { readdir, readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { http200, startChild, stopAll, waitUntilReady } from '../support/children.js';
import { freePorts } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';
import { resultsDir } from './lib/results.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.dirname(BENCH_DIR);
const seconds = Number(process.env.SOAK_SECONDS ?? 300);
const maxCalls = Number(process.env.SOAK_CALLS ?? 1_000_000);

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

async function openFds(pid: number): Promise<number> {
  return (await readdir(`/proc/${pid}/fd`)).length;
}

async function main(): Promise<void> {
  const [redisPort, port] = (await freePorts(2)) as [number, number];
  await startRedis(redisPort, ROOT);
  const env = toolportEnv(port, { REDIS_URL: `redis://127.0.0.1:${redisPort}/0` });
  const child = startChild('toolport (soak)', process.execPath, ['--import', 'tsx', 'src/server.ts'], { cwd: ROOT, env });
  const base = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, 'GET /healthz → 200', http200(`${base}/healthz`));
  const pid = child.proc.pid!;

  // A mix: plain calls, session calls (events, TTL), plan updates, and failures (invalid arguments).
  const json = { 'content-type': 'application/json' };
  await fetch(`${base}/tools/invoke`, {
    method: 'POST',
    headers: { ...json, 'x-session-id': 'soak-plan' },
    body: JSON.stringify({ name: 'planning_setup_plan', arguments: { objective: 'soak', initial_steps: ['a', 'b'] } }),
  });
  const requests = [
    { method: 'POST' as const, path: '/tools/invoke', headers: json, body: JSON.stringify({ name: 'echo', arguments: { text: 'soak' } }) },
    {
      method: 'POST' as const,
      path: '/tools/invoke',
      headers: { ...json, 'x-session-id': 'soak-events' },
      body: JSON.stringify({ name: 'echo', arguments: { text: 'soak' } }),
    },
    {
      method: 'POST' as const,
      path: '/tools/invoke',
      headers: { ...json, 'x-session-id': 'soak-plan' },
      body: JSON.stringify({ name: 'planning_update_step', arguments: { step_id: 1, status: 'in_progress' } }),
    },
    { method: 'POST' as const, path: '/tools/invoke', headers: json, body: JSON.stringify({ name: 'echo', arguments: { wrong: 1 } }) },
  ];

  const samples: { t: number; rssMb: number; fds: number }[] = [];
  const started = Date.now();
  const sampler = setInterval(() => {
    // A sample the server's /proc no longer answers (it is ending) is skipped.
    Promise.all([rssMb(pid), openFds(pid)]).then(
      ([rss, fds]) => samples.push({ t: (Date.now() - started) / 1000, rssMb: rss, fds }),
      () => undefined,
    );
  }, 1000);
  // autocannon's `amount` overrides `duration`: stop at whichever limit comes first ourselves.
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon({ url: base, connections: 16, amount: maxCalls, requests }, (err, done) => (err ? reject(err) : resolve(done)));
    const timer = setTimeout(() => instance.stop(), seconds * 1000);
    instance.on('done', () => clearTimeout(timer));
  });
  clearInterval(sampler);

  const warm = samples.filter((s) => s.t >= Math.min(10, seconds / 3));
  const first = warm[0] ?? samples[0]!;
  const last = samples.at(-1)!;
  const summary = {
    date: new Date().toISOString(),
    calls: result.requests.total,
    seconds: result.duration,
    reqPerSec: Math.round(result.requests.average),
    non2xx: result.non2xx,
    errors: result.errors,
    rssMb: { afterWarmUp: +first.rssMb.toFixed(1), end: +last.rssMb.toFixed(1), max: +Math.max(...samples.map((s) => s.rssMb)).toFixed(1) },
    fds: { afterWarmUp: first.fds, end: last.fds, max: Math.max(...samples.map((s) => s.fds)) },
  };
  console.log(JSON.stringify(summary, null, 2));
  await mkdir(resultsDir(), { recursive: true });
  await writeFile(path.join(resultsDir(), `${summary.date.replace(/:/g, '-')}-soak.json`), `${JSON.stringify({ ...summary, samples }, null, 2)}\n`);
}

try {
  await main();
} finally {
  await stopAll();
}
process.exit(0);
