/**
 * `toolport check`: builds the app as `serve` would (configuration, store, tools file, every
 * plugin and upstream) but never listens; prints one line per tool — name, source kind, hash — on
 * stdout, then on stderr one line per operation an upstream's document offers that is left out (and
 * why) and one per warning; exits 0 (warnings or not), or prints every problem it finds and exits 1.
 */
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import { buildApp, VERSION } from '../app/index.ts';
import { loadConfig, type Config } from '../config.ts';
import { createStore } from '../store/index.ts';
import { Provenance } from '../tools/provenance.ts';
import { ToolRegistry } from '../tools/registry.ts';
import { CliError, table } from './output.ts';
import { ConfigError } from '../errors.ts';

interface Warned {
  msg: string;
  /** An OpenAPI operation left out: its source, id and why. */
  source?: string;
  operation?: string;
  reason?: string;
  /** An MCP server's tool left out: the server, the tool and why. */
  upstream?: string;
  tool?: string;
  problem?: string;
}

/** The line of a left-out operation or MCP tool; null for another warning. */
function leftOut(w: Warned): string | null {
  const firstLine = (text: string) => text.split('\n')[0];
  if (w.operation !== undefined && w.reason !== undefined) return `left out: ${w.source} operation ${w.operation}: ${firstLine(w.reason)}`;
  if (w.tool !== undefined && w.problem !== undefined) return `left out: ${w.upstream} tool ${w.tool}: ${firstLine(w.problem)}`;
  return null;
}

const WARN = 40;

/** A logger writing what `LOG_LEVEL` asks for to stderr, keeping warnings and worse for the summary instead. */
function collectingLogger(level: string, warned: Warned[]): Logger {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of String(chunk).split('\n')) {
        if (line === '') continue;
        const record = JSON.parse(line) as Warned & { level: number };
        if (record.level >= WARN) warned.push(record);
        else process.stderr.write(`${line}\n`);
      }
      done();
    },
  });
  return pino({ level }, sink);
}

/** Every problem of the tools file, when the app did not build; the start's own error leads. */
async function problemsOf(config: Config, env: Readonly<Record<string, string | undefined>>, err: unknown): Promise<string[]> {
  const first = (err instanceof Error ? err.message : String(err)).split('\n')[0]!;
  if (config.toolsFile === null) return [first];
  const log = pino({ level: 'silent' });
  const store = await createStore({ ...config, redisUrl: null, redisClusterNodes: null, redisSentinels: null }, log);
  try {
    const { toolsFileProblems } = await import('../sources/problems.ts');
    const found = await toolsFileProblems({
      file: config.toolsFile,
      env,
      log,
      store,
      provenance: new Provenance(store, new ToolRegistry(), log),
      version: VERSION,
    });
    return [...new Set([first, ...found])];
  } finally {
    await store.close();
  }
}

function report(lines: readonly string[]): void {
  for (const line of lines) process.stderr.write(`toolport: ${line}\n`);
}

export async function check(env: Readonly<Record<string, string | undefined>>): Promise<number> {
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(`bad configuration: ${err.message}`);
    throw err;
  }
  // Logs go to stderr (stdout is the catalog), warnings and worse unless LOG_LEVEL asks for more.
  const level = env.LOG_LEVEL === undefined || env.LOG_LEVEL.trim() === '' ? 'warn' : config.logLevel;
  const warned: Warned[] = [];
  let app;
  try {
    app = await buildApp(config, { logger: collectingLogger(level, warned) });
  } catch (err) {
    const problems = await problemsOf(config, env, err);
    // One problem is one line, as every failure of the command; more end with their count.
    report(problems.length === 1 ? problems : [...problems, `${problems.length} problems, the service would not start`]);
    return 1;
  }
  try {
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    const body = ready.json<{ upstreams_down?: { source: string; reason: string }[]; detail?: string }>();
    const problems =
      ready.statusCode !== 200 ? [`not ready: ${body.detail ?? ready.statusCode}`] : (body.upstreams_down ?? []).map((u) => `${u.source} is down: ${u.reason}`);
    const tools = app.toolport.registry.list();
    process.stdout.write(`${table(tools.map((tool) => [tool.name, tool.source.kind, tool.hash]))}\n`);
    const dropped = warned.map(leftOut).filter((line) => line !== null);
    report(dropped);
    report(warned.filter((w) => leftOut(w) === null).map((w) => `warning: ${w.msg.split('\n')[0]}`));
    if (problems.length > 0) {
      report(problems);
      return 1;
    }
    const notes = [`${tools.length} tools`, ...(dropped.length > 0 ? [`${dropped.length} left out of the catalog`] : [])];
    const others = warned.length - dropped.length;
    if (others > 0) notes.push(`${others} ${others === 1 ? 'warning' : 'warnings'}`);
    process.stderr.write(`toolport: ${notes.join(', ')}, configuration valid\n`);
    return 0;
  } finally {
    await app.close();
  }
}
