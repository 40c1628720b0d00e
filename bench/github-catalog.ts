// `npm run bench:catalog`: GitHub's REST API (1,223 operations, npm @octokit/openapi) as one
// openapi: source. Measures, in this process: the start (buildApp until ready) and RSS after it,
// GET /tools in every format (first answer, then cached), GET /tools/search p50 over the quality
// set's queries, and the per-call cost of an in-process tool with the full catalog loaded against
// a catalog of 10 tools (a child process run with BENCH_CATALOG=small). Targets: start ≤ 10 s,
// RSS ≤ 400 MB, search p50 ≤ 5 ms, per-call p50 with 1,223 tools ≤ 1.5× with 10. On a shared,
// loaded machine wall times measure the neighbours too: each figure is also given as this process's
// CPU time (process.cpuUsage, from /proc), per request the median over chunks of CHUNK requests,
// and the targets are judged on CPU time.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from '../src/app/index.ts';
import { loadConfig } from '../src/config.ts';
import { ok } from '../src/tools/define.ts';
import type { SourceRegistry } from '../src/tools/registry.ts';
import { GITHUB_QUERIES } from '../test/helpers/github-queries.ts';

const CALLS = 4000;
const CHUNK = 100;
const SEARCHES_PER_QUERY = 20;
const FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'];
const small = process.env.BENCH_CATALOG === 'small';

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** The CPU time (ms) of `run`, this process only. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
}

/** Runs `count` requests in chunks of CHUNK: the median wall time per request and the median CPU time per request over the chunks. */
async function measure(count: number, request: (i: number) => Promise<unknown>): Promise<{ wallMs: number; cpuMs: number }> {
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let done = 0; done < count; done += CHUNK) {
    const c = process.cpuUsage();
    for (let i = done; i < done + CHUNK; i++) {
      const t = performance.now();
      await request(i);
      wall.push(performance.now() - t);
    }
    cpu.push(cpuMs(c) / CHUNK);
  }
  return { wallMs: median(wall), cpuMs: median(cpu) };
}

function registerBenchTools(registry: SourceRegistry): void {
  for (let i = 0; i < 10; i++) {
    registry.registerTool({
      name: `bench_echo_${i}`,
      description: 'Echo the text back.',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: (params) => ok({ text: params.text }, 'echoed'),
    });
  }
}

async function main(): Promise<void> {
  const env: Record<string, string> = { LOG_LEVEL: 'error' };
  if (!small) {
    const document = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-bench-')), 'tools.yaml');
    writeFileSync(file, `openapi:\n  - source: github\n    spec: ${document}\n    base_url: "http://127.0.0.1:9"\n`);
    env.TOOLS_FILE = file;
  }
  const started = performance.now();
  const startCpu = process.cpuUsage();
  const app = await buildApp(loadConfig(env), { register: registerBenchTools });
  await app.ready();
  const startMs = performance.now() - started;
  const startCpuMs = cpuMs(startCpu);
  global.gc?.();
  const rssMb = process.memoryUsage().rss / 1e6;
  const heapMb = process.memoryUsage().heapUsed / 1e6;
  const tools = app.toolport.registry.list().length;

  const call = JSON.stringify({ name: 'bench_echo_3', arguments: { text: 'hello' } });
  const invoke = () => app.inject({ method: 'POST', url: '/tools/invoke', headers: { 'content-type': 'application/json' }, payload: call });
  await measure(CALLS / 4, invoke); // warm-up
  const calls = await measure(CALLS, invoke);
  if (small) {
    console.log(JSON.stringify({ tools, calls }));
    await app.close();
    return;
  }

  const listing: Record<string, { firstMs: number; cachedMs: number; bytes: number }> = {};
  for (const format of FORMATS) {
    let t = performance.now();
    const first = await app.inject({ url: `/tools?format=${format}` });
    const firstMs = performance.now() - t;
    t = performance.now();
    await app.inject({ url: `/tools?format=${format}` });
    listing[format] = { firstMs: Math.round(firstMs), cachedMs: Math.round((performance.now() - t) * 10) / 10, bytes: first.body.length };
  }
  await app.inject({ url: '/tools/search?q=warm%20up' }); // the index is built on the first search
  const queries = GITHUB_QUERIES.map(([query]) => `/tools/search?q=${encodeURIComponent(query)}&limit=5`);
  const search = await measure(Math.ceil((SEARCHES_PER_QUERY * queries.length) / CHUNK) * CHUNK, (i) => app.inject({ url: queries[i % queries.length]! }));
  await app.close();

  const child = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_CATALOG: 'small' },
    encoding: 'utf8',
  });
  const baseline = JSON.parse(child.stdout.trim().split('\n').pop()!) as { tools: number; calls: { wallMs: number; cpuMs: number } };
  const round = (ms: number, digits = 3) => Math.round(ms * 10 ** digits) / 10 ** digits;
  const report = {
    tools,
    startS: round(startMs / 1000, 1),
    startCpuS: round(startCpuMs / 1000, 1),
    rssMb: Math.round(rssMb),
    heapMb: Math.round(heapMb),
    listing,
    searchP50Ms: { wall: round(search.wallMs, 2), cpu: round(search.cpuMs, 2) },
    callP50Ms: {
      [`${tools} tools`]: { wall: round(calls.wallMs), cpu: round(calls.cpuMs) },
      [`${baseline.tools} tools`]: { wall: round(baseline.calls.wallMs), cpu: round(baseline.calls.cpuMs) },
    },
  };
  console.log(JSON.stringify(report, null, 2));
  const missed = [
    report.startS > 10 && report.startCpuS > 10 && 'start > 10 s',
    report.rssMb > 400 && 'RSS > 400 MB',
    search.cpuMs > 5 && 'search p50 > 5 ms',
    calls.cpuMs > 1.5 * baseline.calls.cpuMs && 'per-call cost grows with the catalog',
  ].filter(Boolean);
  if (missed.length > 0) {
    console.error(`missed: ${missed.join(', ')}`);
    process.exitCode = 1;
  }
}

await main();
