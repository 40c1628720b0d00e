/**
 * `toolport check`: builds the app as `serve` would (configuration, store, tools file, every
 * plugin and upstream) but never listens; prints one line per tool — name, source kind, hash —
 * and exits 0, or prints the problems and exits 1.
 */
import pino from 'pino';
import { buildApp } from '../app.ts';
import { ConfigError, loadConfig, type Config } from '../config.ts';
import { sourceKind } from '../tools/source-kind.ts';
import { CliError, table } from './output.ts';

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
  const logger = pino({ level }, pino.destination(2));
  const app = await buildApp(config, { logger });
  try {
    const ready = await app.inject({ method: 'GET', url: '/readyz' });
    const body = ready.json<{ upstreams_down?: { source: string; reason: string }[]; detail?: string }>();
    const problems =
      ready.statusCode !== 200 ? [`not ready: ${body.detail ?? ready.statusCode}`] : (body.upstreams_down ?? []).map((u) => `${u.source} is down: ${u.reason}`);
    const tools = app.toolport.registry.list();
    process.stdout.write(`${table(tools.map((tool) => [tool.name, sourceKind(tool.source), tool.hash]))}\n`);
    if (problems.length > 0) {
      for (const problem of problems) process.stderr.write(`toolport: ${problem}\n`);
      return 1;
    }
    process.stderr.write(`toolport: ${tools.length} tools, configuration valid\n`);
    return 0;
  } finally {
    await app.close();
  }
}
