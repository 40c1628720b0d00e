/**
 * deploy/ monitoring: the Prometheus config and alert rules pass `promtool` (syntax, and the rules'
 * own unit tests), the Grafana dashboard's queries are valid PromQL over metric names a real app
 * exports on /metrics, and the compose "monitoring" profile mounts what it names.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ApiKeys } from '../../src/callers/keys.ts';
import { makeApp, post } from '../helpers/app.ts';
import { registerLedgerTools } from '../helpers/ledger-tools.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DEPLOY = path.join(ROOT, 'deploy');
const execFileAsync = promisify(execFile);

async function promtool(...args: string[]): Promise<string> {
  return promtoolIn(path.join(DEPLOY, 'prometheus'), ...args);
}

async function promtoolIn(cwd: string, ...args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await execFileAsync('promtool', args, { cwd, timeout: 60_000 });
    return stdout + stderr;
  } catch (err) {
    const failed = err as NodeJS.ErrnoException & { stdout?: string; stderr?: string };
    if (failed.code === 'ENOENT') throw new Error("promtool is missing: install Debian's `prometheus` package (apt-get install -y prometheus)", { cause: err });
    throw new Error(`promtool ${args.join(' ')} failed:\n${failed.stdout ?? ''}${failed.stderr ?? ''}`, { cause: err });
  }
}

interface Panel {
  title: string;
  targets: { expr: string }[];
}
const dashboard = JSON.parse(await readFile(path.join(DEPLOY, 'grafana/dashboards/toolport.json'), 'utf8')) as { uid: string; panels: Panel[] };
const dashboardQueries = dashboard.panels.flatMap((panel) => panel.targets.map((target) => ({ panel: panel.title, expr: target.expr })));
interface Rule {
  alert: string;
  expr: string;
}
const alertRules = (parse(await readFile(path.join(DEPLOY, 'prometheus/alerts.yml'), 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);

/** PromQL words that are not metric names (functions are recognised by the parenthesis that follows them). */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset']);

/** The metric names a PromQL expression reads: label matchers, grouping clauses, ranges and strings removed. */
function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ');
  const names = [...bare.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)].filter((m) => m[2] === undefined && !KEYWORDS.has(m[1]!)).map((m) => m[1]!);
  return [...new Set(names)];
}

/** Families and types from the Prometheus text exposition (`# TYPE name type`). */
function exportedFamilies(exposition: string): Map<string, string> {
  return new Map([...exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** A name a query may use for a family: the family itself, or a histogram's _bucket/_sum/_count series. */
function isExported(name: string, families: Map<string, string>): boolean {
  if (families.has(name)) return true;
  const histogram = /^(.*)_(bucket|sum|count)$/.exec(name);
  return histogram !== null && families.get(histogram[1]!) === 'histogram';
}

describe('Prometheus configuration and alert rules', () => {
  it('pass promtool check config (with the rule files it names) and check rules', async () => {
    // The scrape key is a Docker secret file at /run/secrets/…: check a copy that points at a file that exists.
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-promtool-'));
    const original = await readFile(path.join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8');
    expect(original).toContain('credentials_file: /run/secrets/toolport_metrics_key');
    await writeFile(path.join(dir, 'toolport_metrics_key'), 'tp-example\n');
    await writeFile(path.join(dir, 'prometheus.yml'), original.replace('/run/secrets/toolport_metrics_key', path.join(dir, 'toolport_metrics_key')));
    await writeFile(path.join(dir, 'alerts.yml'), await readFile(path.join(DEPLOY, 'prometheus/alerts.yml'), 'utf8'));
    expect(await promtoolIn(dir, 'check', 'config', 'prometheus.yml')).toMatch(/SUCCESS: prometheus\.yml is valid/);
    await rm(dir, { recursive: true, force: true });
    expect(await promtool('check', 'rules', 'alerts.yml')).toMatch(/SUCCESS: 5 rules found/);
  });

  it('pass their unit tests: each alert fires on the series that should raise it and not on healthy ones', async () => {
    expect(await promtool('test', 'rules', 'alerts.test.yml')).toMatch(/SUCCESS/);
  });

  it('alert on a dead scrape, an unreachable store, the error ratio, p99 over target and an upstream down', () => {
    expect(alertRules.map((r) => r.alert).sort()).toEqual([
      'ToolportDown',
      'ToolportP99OverTarget',
      'ToolportStoreUnreachable',
      'ToolportToolErrorRatio',
      'ToolportUpstreamDown',
    ]);
  });
});

describe('Grafana dashboard', () => {
  let app: FastifyInstance;
  let exposition: string;
  const sha = (secret: string) => createHash('sha256').update(secret).digest('hex');
  beforeAll(async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-monitoring-'));
    const keysFile = path.join(dir, 'keys.yaml');
    await writeFile(
      keysFile,
      stringify([
        { id: 'agent', key_sha256: sha('sk-agent'), tools: ['*'] },
        { id: 'tight', key_sha256: sha('sk-tight'), tools: ['*'], rate_per_min: 1 },
      ]),
    );
    app = await makeApp('memory', { env: { API_KEYS_FILE: keysFile }, register: registerLedgerTools });
    const agent = { authorization: 'Bearer sk-agent' };
    // A success, a failure, a ledger miss then hit, and a 429: every family has a sample.
    expect((await post(app, { name: 'echo', arguments: { text: 'x' } }, agent)).body.success).toBe(true);
    expect((await post(app, { name: 'nope', arguments: {} }, agent)).body.error.code).toBe('unknown_tool');
    for (let i = 0; i < 2; i++) await post(app, { name: 'charge_global', arguments: { tag: 'monitoring' } }, agent);
    await post(app, { name: 'echo', arguments: { text: 'x' } }, { authorization: 'Bearer sk-tight' });
    expect((await post(app, { name: 'echo', arguments: { text: 'x' } }, { authorization: 'Bearer sk-tight' })).status).toBe(429);
    const task = await post(app, { name: 'echo', arguments: { text: 'later' } }, { ...agent, prefer: 'respond-async' });
    expect(task.status).toBe(202);
    const ended = await app.inject({ method: 'GET', url: `/tasks/${task.body.task_id}?wait_ms=10000`, headers: agent });
    expect(ended.json()).toMatchObject({ status: 'completed' });
    const scraped = await app.inject({ method: 'GET', url: '/metrics', headers: agent });
    expect(scraped.statusCode).toBe(200);
    exposition = scraped.body;
    await rm(dir, { recursive: true, force: true });
  });
  afterAll(() => app?.close());

  it('reads only metric names the service exports on /metrics', () => {
    const families = exportedFamilies(exposition);
    const missing = dashboardQueries.flatMap(({ panel, expr }) =>
      metricNames(expr)
        .filter((name) => !isExported(name, families))
        .map((name) => `${panel}: ${name}`),
    );
    expect(missing).toEqual([]);
    const alertMissing = alertRules.flatMap((rule) =>
      metricNames(rule.expr)
        .filter((name) => name !== 'up' && !isExported(name, families))
        .map((name) => `${rule.alert}: ${name}`),
    );
    expect(alertMissing).toEqual([]);
    expect(exposition).toMatch(/^toolport_rate_limited_total\{caller="tight"\} 1$/m);
    expect(exposition).toMatch(/^toolport_ledger_lookups_total\{result="hit"\} 1$/m);
    expect(exposition).toMatch(/^toolport_tasks_total\{status="completed"\} 1$/m);
  });

  it('has valid PromQL in every panel (checked by promtool as recording rules)', async () => {
    const rules = dashboardQueries.map(({ expr }, i) => ({ record: `dashboard:query_${i}`, expr: expr.replaceAll('$__rate_interval', '5m') }));
    const dir = await mkdtemp(path.join(tmpdir(), 'toolport-dashboard-'));
    try {
      const file = path.join(dir, 'dashboard-queries.yml');
      await writeFile(file, stringify({ groups: [{ name: 'dashboard', rules }] }));
      expect(await promtool('check', 'rules', file)).toMatch(new RegExp(`SUCCESS: ${rules.length} rules found`));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('shows calls by tool and outcome, p50 and p99 durations, the ledger hit ratio, store errors, rate-limited calls and tasks by status', () => {
    const all = dashboardQueries.map((q) => q.expr).join('\n');
    expect(all).toContain('sum by (tool, outcome) (rate(toolport_tool_calls_total');
    expect(all).toMatch(/histogram_quantile\(0\.5, [^\n]*toolport_tool_call_duration_seconds_bucket/);
    expect(all).toMatch(/histogram_quantile\(0\.99, [^\n]*toolport_tool_call_duration_seconds_bucket/);
    expect(all).toMatch(/toolport_ledger_lookups_total\{result=~"hit\|wait"\}[^\n]*\/ sum\(rate\(toolport_ledger_lookups_total/);
    expect(all).toContain('toolport_store_errors_total');
    expect(all).toContain('toolport_rate_limited_total');
    expect(all).toContain('sum by (status) (increase(toolport_tasks_total');
    for (const panel of dashboard.panels) expect(panel.targets.length, panel.title).toBeGreaterThan(0);
  });
});

describe('compose profile "monitoring"', async () => {
  interface Service {
    profiles?: string[];
    volumes?: string[];
    ports?: string[];
  }
  // ${VAR:-default} read as its default, as compose does without a .env.
  const text = (await readFile(path.join(ROOT, 'docker-compose.yml'), 'utf8')).replace(
    /\$\{([A-Z_]+):-([^}]*)\}/g,
    (_match, _name, fallback: string) => fallback,
  );
  const compose = parse(text) as { services: Record<string, Service> };

  it('starts Prometheus and Grafana only with the profile, with every mounted file present', () => {
    for (const name of ['prometheus', 'grafana']) {
      const service = compose.services[name]!;
      expect(service.profiles, name).toEqual(['monitoring']);
      for (const mount of service.volumes!.filter((v) => v.startsWith('./'))) expect(existsSync(path.join(ROOT, mount.split(':')[0]!)), mount).toBe(true);
    }
    expect(compose.services.prometheus!.ports).toEqual(['127.0.0.1:9090:9090']);
    expect(compose.services.grafana!.ports).toEqual(['127.0.0.1:3000:3000']);
    expect(compose.services.toolport!.profiles).toBeUndefined();
  });

  it('scrapes toolport with a key the compose API keys accept, and provisions the dashboard on that Prometheus', async () => {
    const config = parse(await readFile(path.join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')) as {
      scrape_configs: { static_configs: { targets: string[] }[]; authorization: { credentials_file: string } }[];
    };
    const [scrape] = config.scrape_configs;
    expect(scrape!.static_configs[0]!.targets).toEqual(['toolport:8080']);
    // The key is the compose secret toolport_metrics_key, fed by TOOLPORT_METRICS_KEY (.env.example holds the example).
    expect(scrape!.authorization.credentials_file).toBe('/run/secrets/toolport_metrics_key');
    const example = /^TOOLPORT_METRICS_KEY=(.+)$/m.exec(await readFile(path.join(ROOT, '.env.example'), 'utf8'))?.[1]?.trim();
    expect(example).toBeTruthy();
    expect(ApiKeys.load(path.join(DEPLOY, 'toolport/api-keys.yaml')).authenticate(example!)?.id).toBe('prometheus');
    const datasources = parse(await readFile(path.join(DEPLOY, 'grafana/provisioning/datasources/prometheus.yml'), 'utf8')) as {
      datasources: { uid: string; url: string }[];
    };
    expect(datasources.datasources[0]).toMatchObject({ uid: 'prometheus', url: 'http://prometheus:9090' });
    const used = new Set(JSON.stringify(dashboard).match(/"uid":\s*"[^"]+"/g));
    expect([...used].sort()).toEqual(['"uid":"prometheus"', '"uid":"toolport"']);
  });
});
