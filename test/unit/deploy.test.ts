/**
 * Deployment files, checked without a Docker engine (none runs here): the compose file and the
 * gateway config hold what the README promises, and the Dockerfile's own install and start
 * commands serve from a clean copy of the sources.
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApiKeys } from '../../src/callers/keys.ts';
import { readToolsFile } from '../../src/sources/tools-file.ts';
import { startChild, stopAll, waitUntilReady } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFile(path.join(ROOT, file), 'utf8');
const execFileAsync = promisify(execFile);

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  stop_grace_period?: string;
}

/** The compose file as docker compose reads it with no .env: each `${NAME:-default}` becomes its default. */
function withDefaults(text: string): string {
  return text.replace(/\$\{([A-Z_]+):-([^}]*)\}/g, (_match, _name, fallback: string) => fallback);
}

describe('docker-compose.yml', async () => {
  const text = await read('docker-compose.yml');
  const compose = parse(withDefaults(text)) as { services: Record<string, Service>; volumes: Record<string, unknown> };
  const { redis, toolport, litellm } = compose.services;

  it('runs Redis with the append-only file fsynced on every write, a memory limit, no eviction, a named volume and a health check', () => {
    const flags = redis!.command!.join(' ');
    expect(flags).toContain('--appendonly yes');
    expect(flags).toContain('--appendfsync always');
    expect(flags).toMatch(/--maxmemory \d+[kmg]b/);
    expect(flags).toContain('--maxmemory-policy noeviction');
    expect(redis!.volumes).toContain('redis-data:/data');
    expect(Object.keys(compose.volumes)).toContain('redis-data');
    expect(redis!.healthcheck!.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(redis!.ports).toBeUndefined();
  });

  it('builds toolport from the Dockerfile, on Redis once it is healthy, with a plugin, API keys and /plugins mounted', () => {
    expect(toolport!.build).toBe('.');
    expect(toolport!.depends_on).toEqual({ redis: { condition: 'service_healthy' } });
    expect(toolport!.environment).toMatchObject({
      REDIS_URL: 'redis://redis:6379',
      API_KEYS_FILE: '/config/api-keys.yaml',
      TOOL_PLUGINS: 'examples/plugins/calculator.ts',
    });
    expect(toolport!.healthcheck!.test.join(' ')).toContain('/healthz');
    expect(toolport!.volumes).toContain('./deploy/plugins:/plugins:ro');
    for (const mount of toolport!.volumes!.filter((v) => v.startsWith('./'))) {
      expect(existsSync(path.join(ROOT, mount.split(':')[0]!)), mount).toBe(true);
    }
  });

  it('passes a TOOLS_FILE that is mounted from the repository and loads', async () => {
    expect(toolport!.environment!.TOOLS_FILE).toBe('/config/tools.yaml');
    const mount = toolport!.volumes!.find((v) => v.endsWith(':/config/tools.yaml:ro'));
    expect(mount).toBe('./deploy/toolport/tools.yaml:/config/tools.yaml:ro');
    const file = await readToolsFile(path.join(ROOT, mount!.split(':')[0]!), {});
    expect(file.http).toEqual([]);
  });

  it('hands Prometheus its scrape key as a Docker secret from the environment, never a literal in a file', async () => {
    const services = compose.services as Record<string, Service & { secrets?: string[] }>;
    const secrets = (compose as unknown as { secrets: Record<string, { environment?: string; file?: string }> }).secrets;
    expect(services.prometheus!.secrets).toEqual(['toolport_metrics_key']);
    expect(secrets.toolport_metrics_key).toEqual({ environment: 'TOOLPORT_METRICS_KEY' });
    const prometheus = parse(await read('deploy/prometheus/prometheus.yml')) as { scrape_configs: { authorization: Record<string, string> }[] };
    expect(prometheus.scrape_configs[0]!.authorization).toEqual({ type: 'Bearer', credentials_file: '/run/secrets/toolport_metrics_key' });
    expect(await read('deploy/prometheus/prometheus.yml')).not.toMatch(/change-me/);
    // The example secret in .env.example is the one the "prometheus" key accepts.
    const example = /^TOOLPORT_METRICS_KEY=(.*)$/m.exec(await read('.env.example'))?.[1];
    expect(ApiKeys.load(path.join(ROOT, 'deploy/toolport/api-keys.yaml')).authenticate(example!)?.id).toBe('prometheus');
  });

  it('hands Grafana its admin password as a Docker secret from the environment, with no default', () => {
    const services = compose.services as Record<string, Service & { secrets?: string[] }>;
    const secrets = (compose as unknown as { secrets: Record<string, { environment?: string; file?: string }> }).secrets;
    expect(services.grafana!.secrets).toEqual(['grafana_admin_password']);
    expect(secrets.grafana_admin_password).toEqual({ environment: 'GRAFANA_ADMIN_PASSWORD' });
    expect(services.grafana!.environment).toHaveProperty('GF_SECURITY_ADMIN_PASSWORD__FILE', '/run/secrets/grafana_admin_password');
    expect(services.grafana!.environment).not.toHaveProperty('GF_SECURITY_ADMIN_PASSWORD');
    expect(text).not.toMatch(/GRAFANA_ADMIN_PASSWORD:-/);
  });

  it('answers the Host name its neighbours call it by (http://toolport:8080)', () => {
    expect(toolport!.environment).toHaveProperty('ALLOWED_HOSTS', 'toolport');
  });

  it('publishes ports on the loopback interface only, unless BIND_ADDRESS says otherwise', () => {
    expect(toolport!.ports).toEqual(['127.0.0.1:8080:8080']);
    expect(litellm!.ports).toEqual(['127.0.0.1:4000:4000']);
    for (const service of Object.values(compose.services)) {
      for (const port of service.ports ?? []) expect(port).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it('puts LiteLLM on port 4000 with the committed config, model keys from the environment, and a health check', () => {
    expect(litellm!.image).toMatch(/^ghcr\.io\/berriai\/litellm:/);
    expect(litellm!.volumes).toContain('./deploy/litellm/config.yaml:/app/config.yaml:ro');
    expect(litellm!.environment).toHaveProperty('OPENAI_API_KEY');
    expect(litellm!.depends_on).toEqual({ toolport: { condition: 'service_healthy' } });
    expect(litellm!.healthcheck!.test.join(' ')).toContain('http://127.0.0.1:4000/health/liveliness');
  });

  it('names in .env.example every variable it reads, with the same defaults', async () => {
    const example = Object.fromEntries(
      (await read('.env.example'))
        .split('\n')
        .filter((line) => /^[A-Z_]+=/.test(line))
        .map((line) => [line.split('=')[0]!, line.slice(line.indexOf('=') + 1)]),
    );
    const used = [...text.matchAll(/\$\{([A-Z_]+):-([^}]*)\}/g)];
    expect(used.length).toBeGreaterThan(5);
    for (const [, name, fallback] of used) expect(example[name!], name).toBe(fallback);
    expect(await read('.gitignore')).toMatch(/^\.env$/m);
  });
});

describe('deploy/ configuration', () => {
  it("registers toolport's /mcp endpoint in LiteLLM's config, with a key toolport accepts", async () => {
    const config = parse(await read('deploy/litellm/config.yaml')) as {
      model_list: { litellm_params: { api_key: string } }[];
      mcp_servers: Record<string, { url: string; transport: string; auth_type: string; auth_value: string }>;
    };
    expect(config.mcp_servers.toolport).toMatchObject({
      url: 'http://toolport:8080/mcp',
      transport: 'http',
      auth_type: 'bearer_token',
      auth_value: 'os.environ/TOOLPORT_API_KEY',
    });
    expect(config.model_list.every((m) => m.litellm_params.api_key.startsWith('os.environ/'))).toBe(true);
    const keys = ApiKeys.load(path.join(ROOT, 'deploy/toolport/api-keys.yaml'));
    expect(keys.authenticate('tp-litellm-change-me')?.id).toBe('litellm');
    expect(keys.authenticate('tp-admin-change-me')?.admin).toBe(true);
  });

  it("lets the gateway's key read cut results (result_read) besides the tools it calls", () => {
    const gateway = ApiKeys.load(path.join(ROOT, 'deploy/toolport/api-keys.yaml')).authenticate('tp-litellm-change-me')!;
    for (const tool of ['result_read', 'planning_setup_plan', 'add']) expect(gateway.allows(tool), tool).toBe(true);
  });
});

describe('Dockerfile', async () => {
  const dockerfile = await read('Dockerfile');
  const instructions = dockerfile.split('\n').filter((line) => /^[A-Z]+\s/.test(line));

  it('is multi-stage (build, production dependencies, runtime), non-root, HOST=0.0.0.0, health-checked, stopped by SIGTERM', async () => {
    expect(instructions.filter((line) => line.startsWith('FROM '))).toHaveLength(3);
    expect(dockerfile).toContain('RUN npm run build');
    expect(dockerfile).toContain('COPY --from=build --chown=node:node /app/dist ./dist');
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(instructions.find((line) => line.startsWith('USER '))).toBe('USER node');
    expect(dockerfile).toMatch(/HOST=0\.0\.0\.0/);
    expect(dockerfile).toMatch(/HEALTHCHECK [^\n]*\\\n[^\n]*\/healthz/);
    expect(instructions).toContain('STOPSIGNAL SIGTERM');
    const ignored = (await read('.dockerignore')).split('\n');
    expect(ignored).toEqual(expect.arrayContaining(['node_modules', '.git', 'test']));
  });

  it('serves compiled from a clean copy after its own build and install commands, with its own start command', async () => {
    const copy = await mkdtemp(path.join(tmpdir(), 'toolport-image-'));
    try {
      // The build stage: `npm run build` (tsc, then the console and Lua files), whose dist/ the image copies.
      const build = await mkdtemp(path.join(tmpdir(), 'toolport-build-'));
      for (const entry of ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts', 'src'])
        await cp(path.join(ROOT, entry), path.join(build, entry), { recursive: true });
      await symlink(path.join(ROOT, 'node_modules'), path.join(build, 'node_modules'));
      await execFileAsync('npm', ['run', 'build'], { cwd: build, timeout: 120_000 });
      await cp(path.join(build, 'dist'), path.join(copy, 'dist'), { recursive: true });
      await rm(build, { recursive: true, force: true });
      for (const entry of ['package.json', 'package-lock.json', 'src', 'examples', 'deploy'])
        await cp(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
      await execFileAsync('npm', ['ci', '--omit=dev', '--no-audit', '--no-fund'], { cwd: copy, timeout: 170_000 });
      expect(existsSync(path.join(copy, 'node_modules/vitest'))).toBe(false);
      const cmd = JSON.parse(instructions.find((line) => line.startsWith('CMD '))!.slice(4)) as string[];
      const [port] = await freePorts(1);
      const env = {
        PATH: process.env.PATH ?? '',
        HOST: '127.0.0.1',
        PORT: String(port),
        NODE_ENV: 'production',
        LOG_LEVEL: 'warn',
        TOOL_PLUGINS: 'examples/plugins/calculator.ts',
        API_KEYS_FILE: 'deploy/toolport/api-keys.yaml',
        // The compiled build's own worker files: handlers in the isolation pool, programs in code mode's sandbox.
        TOOL_ISOLATION: 'worker',
        CODE_MODE: 'true',
      };
      const child = startChild('toolport (production install)', cmd[0] === 'node' ? process.execPath : cmd[0]!, cmd.slice(1), { cwd: copy, env });
      const base = `http://127.0.0.1:${port}`;
      await waitUntilReady(child, 'GET /healthz → 200', async () => (await fetch(`${base}/healthz`)).ok);
      const response = await fetch(`${base}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer tp-litellm-change-me' },
        body: JSON.stringify({ name: 'add', arguments: { a: 2, b: 3 } }),
      });
      expect(await response.json()).toMatchObject({ success: true, value: { sum: 5 } });
      const program = await fetch(`${base}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer tp-admin-change-me' },
        body: JSON.stringify({ name: 'code_run', arguments: { code: 'const { sum } = await tools.add({ a: 20, b: 22 }); return sum * 2;' } }),
      });
      expect(await program.json()).toMatchObject({ success: true, value: { value: 84 } });
    } finally {
      await stopAll();
      await rm(copy, { recursive: true, force: true });
    }
  }, 180_000);
});
