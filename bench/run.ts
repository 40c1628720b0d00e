// `npm run bench`: start the baseline, a throwaway Redis and toolport (memory and Redis
// store) as children, load each scenario with autocannon, print a table and save JSON.
// Env: BENCH_DURATION (seconds, default 10), BENCH_ONLY (comma list of targets: bare,memory,redis,sdk),
// BENCH_MATCH (only scenarios whose name contains this text, or one of these comma-separated texts, plus the baseline),
// BENCH_COMPILED=1 (toolport runs as `node dist/server.js`, as the image does; `npm run build` first).
import type autocannon from 'autocannon';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { http200, startChild, stopAll, waitUntilReady } from '../support/children.js';
import { combine, cpuUsPerRequest, Latencies, load, type LoadResult } from './lib/load.js';
import { freePorts } from '../support/ports.js';
import { startRedis } from '../support/redis-server.js';
import { formatTable, writeJson, type Row } from './lib/report.js';
import { resultsDir } from './lib/results.js';
import { BASELINE, scenarios, TARGETS, type BenchTarget, type Scenario, type Target } from './scenarios.js';
import { toolportEnv } from './lib/toolport-env.js';

const BENCH_DIR = path.dirname(fileURLToPath(import.meta.url));
/** How long a child may take to start: tsx compiles slowly on a loaded machine. */
const START_TIMEOUT_MS = 120_000;
const ROOT = path.dirname(BENCH_DIR);
/** toolport as the image runs it (compiled by tsc) rather than through tsx. */
const COMPILED = process.env.BENCH_COMPILED === '1';
const CONNECTIONS = 32;
const WARMUP_SECONDS = 2;
/** Length of one slice of a row or of the baseline when they alternate. */
const SLICE_SECONDS = 1;
/** Quiet time before each slice, so one server's garbage collection does not run into the next slice. */
const PAUSE_MS = 250;

function readDuration(): number {
  const seconds = Number(process.env.BENCH_DURATION ?? 10);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new Error(`BENCH_DURATION must be a positive number of seconds, got "${process.env.BENCH_DURATION}"`);
  return seconds;
}

function selectScenarios(): Scenario[] {
  const match = process.env.BENCH_MATCH;
  if (match) {
    const parts = match
      .split(',')
      .map((part) => part.trim())
      .filter(Boolean);
    return scenarios.filter((s) => s.name === BASELINE || parts.some((part) => s.name.includes(part)));
  }
  const only = process.env.BENCH_ONLY?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (!only?.length) return scenarios;
  const unknown = only.filter((t) => !TARGETS.includes(t as Target));
  if (unknown.length) throw new Error(`BENCH_ONLY: unknown target(s) ${unknown.join(', ')}; use ${TARGETS.join(', ')}`);
  return scenarios.filter((s) => only.includes(s.target));
}

/** A server under load: its base URL and its process (whose CPU time is measured). */
interface Server {
  base: string;
  pid: number;
}

/** Start only the servers the selected scenarios need; returns each target's base URL and process id. */
async function startServers(targets: Set<Target>): Promise<Map<Target, Server>> {
  const [barePort, memoryPort, redisToolportPort, redisPort, sdkPort, acksToolportPort, acksPrimaryPort, acksReplicaPort] = (await freePorts(
    8,
  )) as number[] as [number, number, number, number, number, number, number, number];
  const bases = new Map<Target, Server>();
  // Plain `node --import tsx` (not the tsx CLI) so each server is one process we can signal directly.
  const tsxArgs = (script: string) => ['--import', 'tsx', script];

  if (targets.has('bare')) {
    const child = startChild('bare fastify', process.execPath, tsxArgs('bench/bare-fastify.ts'), {
      cwd: ROOT,
      env: { ...process.env, PORT: String(barePort) },
    });
    // The baseline has no /healthz; a 200 from /echo proves it is listening.
    await waitUntilReady(
      child,
      'POST /echo → 200',
      async () => {
        const res = await fetch(`http://127.0.0.1:${barePort}/echo`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
          signal: AbortSignal.timeout(1000),
        });
        await res.body?.cancel();
        return res.status === 200;
      },
      START_TIMEOUT_MS,
    );
    bases.set('bare', { base: `http://127.0.0.1:${barePort}`, pid: child.proc.pid! });
  }

  if (targets.has('sdk')) {
    const child = startChild('official MCP SDK (stateless)', process.execPath, tsxArgs('bench/sdk-stateless.ts'), {
      cwd: ROOT,
      env: { ...process.env, PORT: String(sdkPort) },
    });
    // Ready when a tools/call answers 200 (the server has no health route).
    await waitUntilReady(
      child,
      'POST /mcp → 200',
      async () => {
        const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
        const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'ready' } } });
        const res = await fetch(`http://127.0.0.1:${sdkPort}/mcp`, { method: 'POST', headers, body, signal: AbortSignal.timeout(1000) });
        await res.body?.cancel();
        return res.status === 200;
      },
      START_TIMEOUT_MS,
    );
    bases.set('sdk', { base: `http://127.0.0.1:${sdkPort}`, pid: child.proc.pid! });
  }

  const startToolport = async (target: Target, port: number, redisUrl?: string) => {
    const env = toolportEnv(port, redisUrl ? { REDIS_URL: redisUrl } : {});
    const args = COMPILED ? ['dist/server.js'] : tsxArgs('src/server.ts');
    const child = startChild(`toolport (${target} store${COMPILED ? ', compiled' : ''})`, process.execPath, args, { cwd: ROOT, env });
    const base = `http://127.0.0.1:${port}`;
    await waitUntilReady(child, 'GET /healthz → 200', http200(`${base}/healthz`), START_TIMEOUT_MS);
    bases.set(target, { base, pid: child.proc.pid! });
  };

  if (targets.has('memory')) await startToolport('memory', memoryPort);
  if (targets.has('redis')) {
    await startRedis(redisPort, ROOT);
    await startToolport('redis', redisToolportPort, `redis://127.0.0.1:${redisPort}/0`);
  }
  if (targets.has('redis-acks')) {
    await startRedis(acksPrimaryPort, ROOT);
    await startRedis(acksReplicaPort, ROOT, ['--replicaof', '127.0.0.1', String(acksPrimaryPort)]);
    await waitForReplica(acksPrimaryPort);
    await startToolport('redis-acks', acksToolportPort, `redis://127.0.0.1:${acksPrimaryPort}/0`);
  }
  return bases;
}

/** Waits until the primary on `port` has an online replica (a fresh one syncs in well under a second). */
async function waitForReplica(port: number): Promise<void> {
  const { Redis } = await import('ioredis');
  const client = new Redis(port, '127.0.0.1');
  try {
    for (let i = 0; i < 200; i++) {
      if (/slave0:.*state=online/.test(await client.info('replication'))) return;
      await sleep(50);
    }
    throw new Error(`the bench's Redis on :${port} got no online replica within 10 s`);
  } finally {
    client.disconnect();
  }
}

/** The session of the n-th connection of a scenario that gives each connection its own. */
const sessionOf = (headers: Record<string, string>, n: number) => ({ ...headers, 'x-session-id': `${headers['x-session-id'] ?? 'bench'}-${n}` });

async function runSetup(scenario: Scenario, base: string): Promise<void> {
  const sessions = scenario.sessionPerConnection ? CONNECTIONS : 1;
  for (const step of scenario.setup ?? [])
    for (let n = 0; n < sessions; n++) {
      const headers = scenario.sessionPerConnection ? sessionOf(step.headers, n) : step.headers;
      const res = await fetch(base + step.path, { method: 'POST', headers, body: step.body, signal: AbortSignal.timeout(10_000) });
      const text = await res.text();
      if (!res.ok || (JSON.parse(text) as { success?: boolean }).success === false)
        throw new Error(`set-up of "${scenario.name}" failed: ${res.status} ${text.slice(0, 300)}`);
    }
}

function loadOptions(scenario: Scenario, base: string, overallRate = scenario.overallRate): autocannon.Options {
  const options: autocannon.Options = {
    url: base + scenario.path,
    method: scenario.method,
    headers: scenario.headers,
    body: scenario.body,
    connections: CONNECTIONS,
    ...(scenario.uniqueIds && { idReplacement: true }),
    ...(overallRate !== undefined && { overallRate }),
  };
  if (scenario.sessionPerConnection) {
    let next = 0;
    options.setupClient = (client) => client.setHeaders(sessionOf(scenario.headers, next++ % CONNECTIONS));
  }
  return options;
}

/**
 * One row, measured in slices alternating with the baseline (baseline slice, row slice, …): this
 * shared machine's speed drifts by tens of percent within minutes, and a slow slice then slows
 * both halves of its pair alike. The row's ratio is the median of its pairs' ratios.
 */
async function measureRow(
  scenario: Scenario,
  server: Server,
  baseline: { scenario: Scenario; server: Server } | null,
  duration: number,
): Promise<{ run: LoadResult; bare: LoadResult | null; ratio: number | null }> {
  await runSetup(scenario, server.base);
  const options = loadOptions(scenario, server.base);
  const baselineOptions = baseline === null ? null : loadOptions(baseline.scenario, baseline.server.base, scenario.overallRate);
  const watcher = scenario.watched ? await watchCalls(server.base) : null;
  try {
    // Warm-up lets V8 optimise the hot path and pools fill; its numbers are discarded.
    await load({ ...options, duration: WARMUP_SECONDS });
    const slices = Math.max(3, Math.round(duration / SLICE_SECONDS));
    const sliceSeconds = duration / slices;
    const rowLatencies = new Latencies();
    const bareLatencies = new Latencies();
    const rowRuns: LoadResult[] = [];
    const bareRuns: LoadResult[] = [];
    const ratios: number[] = [];
    const watchedBefore = watcher?.bytes() ?? 0;
    for (let i = 0; i < slices; i++) {
      if (baseline) {
        await sleep(PAUSE_MS);
        bareRuns.push(await load({ ...baselineOptions!, duration: sliceSeconds }, bareLatencies, baseline.server.pid));
      }
      await sleep(PAUSE_MS);
      rowRuns.push(await load({ ...options, duration: sliceSeconds }, rowLatencies, server.pid));
      if (baseline) ratios.push(rowRuns.at(-1)!.reqPerSec / bareRuns.at(-1)!.reqPerSec);
    }
    ratios.sort((a, b) => a - b);
    if (watcher !== null && watcher.bytes() === watchedBefore) throw new Error(`"${scenario.name}": the console watching /calls/stream received nothing`);
    return {
      run: combine(rowRuns, rowLatencies),
      bare: baseline ? combine(bareRuns, bareLatencies) : null,
      ratio: baseline ? ratios[Math.floor(ratios.length / 2)]! : null,
    };
  } finally {
    watcher?.close();
  }
}

/** A console on GET /calls/stream: reads (and drops) every event; how many bytes came tells it was live. */
function watchCalls(base: string): Promise<{ bytes(): number; close(): void }> {
  return new Promise((resolve, reject) => {
    let received = 0;
    const request = http.get(`${base}/calls/stream?limit=1`, { headers: { accept: 'text/event-stream' } }, (response) => {
      if (response.statusCode !== 200) return reject(new Error(`GET /calls/stream answered ${response.statusCode}`));
      response.on('data', (chunk: Buffer) => (received += chunk.length));
      response.on('error', () => {});
      resolve({ bytes: () => received, close: () => request.destroy() });
    });
    request.on('error', reject);
  });
}

/**
 * The targets of a row as text, and whether this run met them all (null: nothing to compare with).
 * Throughput targets are judged on CPU per request (`ratio` = bare's CPU/request ÷ the row's: the
 * share of bare Fastify's throughput the row would reach on the same CPU), which holds steady on a
 * shared machine where req/s does not.
 */
function judge(
  targets: BenchTarget[],
  row: { ratio: number | null; cpuUs: number; p50Ms: number; p99Ms: number; bareP50Ms: number | null; bareP99Ms: number | null },
): { target: string; met: boolean | null } {
  if (targets.length === 0) return { target: '', met: null };
  const checks = targets.map((t): [string, boolean | null] => {
    switch (t.kind) {
      case 'ratio':
        return [`≥ ${t.min}× bare by CPU`, row.ratio === null ? null : row.ratio >= t.min];
      case 'relative': {
        // Both rows as ratios to their own neighbouring baselines, so drift between them cancels.
        const other = ratiosByName.get(t.of);
        return [`≥ ${t.min}× "${t.of}" by CPU`, other == null || row.ratio === null ? null : row.ratio / other >= t.min];
      }
      case 'p99':
        return [`p99 ≤ ${t.max}× bare`, row.bareP99Ms === null ? null : row.p99Ms <= t.max * row.bareP99Ms];
      case 'p50':
        return [`p50 ≤ ${t.maxMs} ms`, row.p50Ms <= t.maxMs];
      case 'cpuOf': {
        // CPU(row) / CPU(of) = ratio(of) / ratio(row): each against its own baseline slices, so drift cancels.
        const other = ratiosByName.get(t.of);
        const times = other == null || row.ratio === null ? null : other / row.ratio;
        return [`CPU ≤ ${t.max}× "${t.of}"${times === null ? '' : ` (${times.toFixed(2)}×)`}`, times === null ? null : times <= t.max];
      }
      case 'cpuPlus': {
        const other = cpuByName.get(t.of);
        const extra = other === undefined ? null : row.cpuUs - other;
        return [`CPU ≤ "${t.of}" + ${t.maxUs} µs${extra === null ? '' : ` (+${extra.toFixed(1)})`}`, extra === null ? null : extra <= t.maxUs];
      }
      case 'addedP50':
      case 'addedP99': {
        const [mine, bare] = t.kind === 'addedP50' ? [row.p50Ms, row.bareP50Ms] : [row.p99Ms, row.bareP99Ms];
        const added = bare === null ? null : mine - bare;
        return [
          `${t.kind === 'addedP50' ? 'p50' : 'p99'} ≤ bare + ${t.maxMs} ms${added === null ? '' : ` (${added >= 0 ? '+' : ''}${added.toFixed(2)})`}`,
          added === null ? null : added <= t.maxMs,
        ];
      }
    }
  });
  const met = checks.some(([, ok]) => ok === null) ? null : checks.every(([, ok]) => ok);
  return { target: checks.map(([text]) => text).join('; '), met };
}

/** Filled once the runs are done, for judge(): each row's bare CPU/request ÷ its own, over its neighbouring baselines. */
const ratiosByName = new Map<string, number | null>();
/** Filled with them: each row's CPU time per request in µs. */
const cpuByName = new Map<string, number>();

const inverse = (x: number | null) => (x === null || !Number.isFinite(x) || x === 0 ? null : 1 / x);

/** Runs the rows; false when a target was missed. */
async function main(): Promise<boolean> {
  const duration = readDuration();
  const selected = selectScenarios();
  const targets = new Set(selected.map((s) => s.target));
  // Checked before anything starts, so a missing service fails in a second, not after the baseline boots.
  if ((targets.has('memory') || targets.has('redis')) && !existsSync(path.join(ROOT, 'src/server.ts'))) {
    throw new Error('src/server.ts does not exist yet; run with BENCH_ONLY=bare to benchmark the baseline only');
  }
  if (COMPILED && !existsSync(path.join(ROOT, 'dist/server.js'))) throw new Error('BENCH_COMPILED=1 needs dist/server.js: run `npm run build` first');
  const bases = await startServers(targets);

  const baselineScenario = selected.find((s) => s.name === BASELINE);
  const baseline = baselineScenario ? { scenario: baselineScenario, server: bases.get('bare')! } : null;
  const bareRuns: LoadResult[] = [];
  if (baseline) {
    console.error(`warming up "${BASELINE}" (${WARMUP_SECONDS} s)…`);
    await load({ ...loadOptions(baseline.scenario, baseline.server.base), duration: WARMUP_SECONDS });
  }
  const measured: { scenario: Scenario; run: LoadResult; bare: LoadResult | null; ratio: number | null }[] = [];
  for (const scenario of selected) {
    if (scenario === baselineScenario) continue;
    console.error(`running "${scenario.name}" (${WARMUP_SECONDS} s warm-up + ${duration} s${baseline ? ', alternating with the baseline' : ''})…`);
    const row = await measureRow(scenario, bases.get(scenario.target)!, baseline, duration);
    if (row.bare) bareRuns.push(row.bare);
    measured.push({ scenario, ...row });
  }

  const rows: Row[] = [];
  if (baseline && bareRuns.length > 0) {
    const rates = bareRuns.map((r) => r.reqPerSec);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const bareCpu = cpuUsPerRequest(combine(bareRuns, new Latencies()));
    rows.push({
      scenario: `${BASELINE} (all its slices: ${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)} req/s per row)`,
      reqPerSec: mean(rates),
      p50Ms: mean(bareRuns.map((r) => r.p50Ms)),
      p99Ms: mean(bareRuns.map((r) => r.p99Ms)),
      ratioToBare: 1,
      cpuUsPerRequest: bareCpu,
      cpuRatioToBare: 1,
      non2xx: bareRuns.reduce((n, r) => n + r.non2xx, 0),
      errors: bareRuns.reduce((n, r) => n + r.errors, 0),
      target: '',
      met: null,
    });
  }
  const cpuRatioOf = (run: LoadResult, bare: LoadResult | null) => (bare === null ? null : cpuUsPerRequest(run) / cpuUsPerRequest(bare));
  for (const m of measured) {
    ratiosByName.set(m.scenario.name, inverse(cpuRatioOf(m.run, m.bare)));
    cpuByName.set(m.scenario.name, cpuUsPerRequest(m.run));
  }
  for (const { scenario, run, bare, ratio } of measured) {
    const cpuRatio = cpuRatioOf(run, bare);
    rows.push({
      scenario: scenario.name,
      reqPerSec: run.reqPerSec,
      p50Ms: run.p50Ms,
      p99Ms: run.p99Ms,
      ratioToBare: ratio,
      cpuUsPerRequest: cpuUsPerRequest(run),
      // Against the baseline slices that alternated with this row's.
      cpuRatioToBare: cpuRatio,
      non2xx: run.non2xx,
      errors: run.errors,
      ...judge(scenario.targets ?? [], {
        ratio: inverse(cpuRatio),
        cpuUs: cpuUsPerRequest(run),
        p50Ms: run.p50Ms,
        p99Ms: run.p99Ms,
        bareP50Ms: bare?.p50Ms ?? null,
        bareP99Ms: bare?.p99Ms ?? null,
      }),
    });
  }

  console.log(formatTable(rows));
  for (const row of rows) {
    if (row.non2xx > 0 || row.errors > 0) {
      console.log(`WARNING: "${row.scenario}" had ${row.non2xx} non-2xx responses and ${row.errors} errors; its numbers are not valid`);
    }
  }
  const baselineRuns = bareRuns.map((r) => Math.round(r.reqPerSec));
  const file = await writeJson(resultsDir(), rows, { durationSeconds: duration, connections: CONNECTIONS, baselineRuns });
  console.log(`results written to ${path.relative(ROOT, file)}`);
  const missed = rows.filter((row) => row.met === false);
  if (missed.length > 0) {
    console.log(`targets missed: ${missed.map((row) => `"${row.scenario}"`).join(', ')}`);
    return false;
  }
  return true;
}

let stopping = false;
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    // A second signal means "now": the 'exit' hook in children.ts SIGKILLs what is left.
    if (stopping) process.exit(code);
    stopping = true;
    console.error(`\n${signal}: stopping child processes…`);
    void stopAll().finally(() => process.exit(code));
  });
}

let exitCode = 0;
try {
  if (!(await main())) exitCode = 1;
} catch (err) {
  console.error(err instanceof Error ? err.message : err);
  exitCode = 1;
} finally {
  await stopAll();
}
// Exit explicitly: a stray keep-alive socket must not keep the harness alive.
process.exit(exitCode);
