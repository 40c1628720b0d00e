// `npm run bench:code`: code mode (docs/code-mode.md). Two measures:
// 1. On GitHub's REST API (1,223 operations, npm @octokit/openapi), the tokens (js-tiktoken,
//    o200k_base) of what a model must read to do a 3-step task: every definition; tool_search +
//    tool_invoke (their definitions and the three searches' answers); code_api + code_run (their
//    definitions and the three code_api answers). Also the time to declare the whole catalog.
// 2. The CPU time (process.cpuUsage: every thread, the sandbox's worker included) of a code_run
//    making 1 and 10 inner calls, against the same calls made directly, median per run over chunks.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { getEncoding } from 'js-tiktoken';
import { buildApp } from '../src/app/index.ts';
import { declarationsOf } from '../src/builtin/code/declarations.ts';
import { loadConfig } from '../src/config.ts';
import { ok } from '../src/tools/define.ts';
import type { SourceRegistry } from '../src/tools/registry.ts';

/** A 3-step task: find the open issues of a repository, read a pull request, comment on an issue. */
const STEPS = ['list issues of a repository', 'get a pull request', 'create a comment on an issue'];
const HITS = 5;
const RUNS = 200;
const CHUNK = 20;

const encoder = getEncoding('o200k_base');
const tokens = (value: unknown) => encoder.encode(typeof value === 'string' ? value : JSON.stringify(value)).length;

async function invoke(app: FastifyInstance, name: string, args: Record<string, unknown>): Promise<Record<string, any>> {
  const response = await app.inject({ method: 'POST', url: '/tools/invoke', payload: { name, arguments: args } });
  return response.json() as Record<string, any>;
}

async function tokensOnGitHub(): Promise<void> {
  const document = createRequire(import.meta.url).resolve('@octokit/openapi/generated/api.github.com.json');
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-bench-')), 'tools.yaml');
  writeFileSync(file, `openapi:\n  - source: github\n    spec: ${document}\n    base_url: "http://127.0.0.1:9"\n`);
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'error', TOOLS_FILE: file, CODE_MODE: 'true' }));
  await app.ready();
  const listing = (await app.inject({ method: 'GET', url: '/tools?format=openai' })).json() as { tools: { function: { name: string } }[] };
  const definitions = (names: string[]) => listing.tools.filter((t) => names.includes(t.function.name));
  const github = listing.tools.filter((t) => t.function.name.startsWith('github_'));

  const searches = await Promise.all(STEPS.map((query) => invoke(app, 'tool_search', { query, limit: HITS })));
  const apis = await Promise.all(STEPS.map((query) => invoke(app, 'code_api', { query, limit: HITS })));
  const searchTokens = tokens(definitions(['tool_search', 'tool_invoke'])) + searches.reduce((sum, s) => sum + tokens(s.content), 0);
  const codeTokens = tokens(definitions(['code_api', 'code_run'])) + apis.reduce((sum, a) => sum + tokens(a.content), 0);
  const registry = app.toolport.registry;
  const all = registry.list().filter((t) => t.name.startsWith('github_'));
  const t = performance.now();
  const declared = declarationsOf(all);
  const declareMs = performance.now() - t;
  console.log(`GitHub catalog: ${github.length} tools`);
  console.log(`  every definition (openai format):            ${tokens(github)} tokens`);
  console.log(`  tool_search + tool_invoke, ${STEPS.length} searches of ${HITS}: ${searchTokens} tokens`);
  console.log(`  code_api + code_run, ${STEPS.length} code_api of ${HITS}:     ${codeTokens} tokens`);
  console.log(`  the whole catalog declared: ${tokens(declared)} tokens, made in ${declareMs.toFixed(0)} ms (first time)`);
  console.log(`  first hits: search ${searches.map((s) => s.value.tools[0].name).join(', ')}; code_api ${apis.map((a) => a.value.tools[0]).join(', ')}`);
  await app.close();
}

function registerEcho(registry: SourceRegistry): void {
  registry.registerTool({
    name: 'bench_echo',
    description: 'Echo the text back.',
    parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    handler: (params) => ok({ text: params.text }, 'echoed'),
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median CPU ms per run of `once`, over chunks of CHUNK runs. */
async function cpuPerRun(once: () => Promise<unknown>): Promise<{ cpuMs: number; wallMs: number }> {
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < CHUNK; i++) await once(); // warm-up
  for (let done = 0; done < RUNS; done += CHUNK) {
    const since = process.cpuUsage();
    const t = performance.now();
    for (let i = 0; i < CHUNK; i++) await once();
    const used = process.cpuUsage(since);
    cpu.push((used.user + used.system) / 1000 / CHUNK);
    wall.push((performance.now() - t) / CHUNK);
  }
  return { cpuMs: median(cpu), wallMs: median(wall) };
}

async function cpuOfRuns(): Promise<void> {
  const app = await buildApp(loadConfig({ LOG_LEVEL: 'error', CODE_MODE: 'true' }), { register: registerEcho });
  await app.ready();
  for (const n of [1, 10]) {
    const code = `const out = []; for (let i = 0; i < ${n}; i++) out.push((await tools.bench_echo({ text: 'hi ' + i })).text); return out;`;
    const program = await cpuPerRun(async () => {
      const answer = await invoke(app, 'code_run', { code });
      if (answer.success !== true) throw new Error(`code_run failed: ${answer.message}`);
    });
    const direct = await cpuPerRun(async () => {
      for (let i = 0; i < n; i++) await invoke(app, 'bench_echo', { text: `hi ${i}` });
    });
    console.log(
      `${n} call(s): code_run ${program.cpuMs.toFixed(2)} ms CPU (${program.wallMs.toFixed(2)} ms wall); direct ${direct.cpuMs.toFixed(2)} ms CPU (${direct.wallMs.toFixed(2)} ms wall); ratio ${(program.cpuMs / direct.cpuMs).toFixed(1)}`,
    );
  }
  await app.close();
}

await tokensOnGitHub();
await cpuOfRuns();
