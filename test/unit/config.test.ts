import { describe, it, expect } from 'vitest';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, secretText } from '../../src/config.ts';
import { ConfigError } from '../../src/errors.ts';

/** The ConfigError thrown for `env`, so its class and message can both be checked. */
function configErrorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw new Error(`expected a ConfigError, got ${String(err)}`, { cause: err });
  }
  throw new Error(`expected a ConfigError for ${JSON.stringify(env)}, but the configuration loaded`);
}

describe('loadConfig', () => {
  it('uses the defaults of docs/operations.md when the environment is empty', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      keyPrefix: 'toolport:',
      sessionTtlS: 86400,
      maxBodyBytes: 1_048_576,
      maxContentChars: 100_000,
      defaultTimeoutMs: 30_000,
      logLevel: 'info',
      redisUrl: null,
      redisClusterNodes: null,
      apiKeysFile: null,
      workspaceRoot: null,
    });
    expect(config.toolPlugins).toEqual([]);
  });

  it('reads the values that are set', () => {
    const config = loadConfig({
      PORT: '9000',
      HOST: '0.0.0.0',
      REDIS_URL: 'rediss://cache.example:6380/2',
      KEY_PREFIX: 'tp:',
      LOG_LEVEL: 'debug',
      SESSION_TTL_S: '60',
      MAX_BODY_BYTES: '2048',
      MAX_CONTENT_CHARS: '500',
      DEFAULT_TIMEOUT_MS: '1500',
      API_KEYS_FILE: '/etc/toolport/keys.yaml',
      WORKSPACE_ROOT: '/srv/workspace',
    });
    expect(config).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      redisUrl: 'rediss://cache.example:6380/2',
      keyPrefix: 'tp:',
      logLevel: 'debug',
      sessionTtlS: 60,
      maxBodyBytes: 2048,
      maxContentChars: 500,
      defaultTimeoutMs: 1500,
      apiKeysFile: '/etc/toolport/keys.yaml',
      workspaceRoot: '/srv/workspace',
    });
  });

  it('returns a frozen configuration that cannot be changed afterwards', () => {
    const config = loadConfig({ TOOL_PLUGINS: 'a.ts' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.toolPlugins)).toBe(true);
    expect(() => {
      (config as { port: number }).port = 1;
    }).toThrow(TypeError);
    expect(config.port).toBe(8080);
  });

  it('splits TOOL_PLUGINS on commas and trims each entry', () => {
    const config = loadConfig({ TOOL_PLUGINS: ' ./a.ts ,b-package,  ./plugins/c.mjs ,' });
    expect(config.toolPlugins).toEqual(['./a.ts', 'b-package', './plugins/c.mjs']);
  });

  it('parses REDIS_CLUSTER_NODES into host and port pairs', () => {
    const config = loadConfig({ REDIS_CLUSTER_NODES: 'node-a:7000, node-b:7001' });
    expect(config.redisClusterNodes).toEqual([
      { host: 'node-a', port: 7000 },
      { host: 'node-b', port: 7001 },
    ]);
    expect(config.redisUrl).toBeNull();
  });

  it.each([
    ['PORT', { PORT: 'abc' }],
    ['PORT', { PORT: '70000' }],
    ['REDIS_URL', { REDIS_URL: 'http://x' }],
    ['REDIS_URL', { REDIS_URL: 'nonsense' }],
    ['LOG_LEVEL', { LOG_LEVEL: 'loud' }],
    ['SESSION_TTL_S', { SESSION_TTL_S: '0' }],
    ['MAX_BODY_BYTES', { MAX_BODY_BYTES: '-1' }],
    ['DEFAULT_TIMEOUT_MS', { DEFAULT_TIMEOUT_MS: '1.5' }],
    ['REDIS_CLUSTER_NODES', { REDIS_CLUSTER_NODES: 'bad' }],
    ['REDIS_CLUSTER_NODES', { REDIS_URL: 'redis://localhost:6379', REDIS_CLUSTER_NODES: 'node-a:7000' }],
  ] as const)('refuses a bad %s with a ConfigError naming it (%j)', (variable, env) => {
    const error = configErrorOf(env);
    expect(error.message).toContain(variable);
  });

  it('names both variables when REDIS_URL and REDIS_CLUSTER_NODES are set together', () => {
    const error = configErrorOf({ REDIS_URL: 'redis://localhost:6379', REDIS_CLUSTER_NODES: 'node-a:7000' });
    expect(error.message).toContain('REDIS_URL');
    expect(error.message).toContain('REDIS_CLUSTER_NODES');
  });

  it('states the bad value in the message so the operator can find it', () => {
    expect(configErrorOf({ PORT: 'abc' }).message).toContain('"abc"');
  });

  it('pipelines Redis commands unless REDIS_AUTO_PIPELINING turns it off', () => {
    expect(loadConfig({}).redisAutoPipelining).toBe(true);
    expect(loadConfig({ REDIS_AUTO_PIPELINING: 'false' }).redisAutoPipelining).toBe(false);
    expect(loadConfig({ REDIS_AUTO_PIPELINING: ' Off ' }).redisAutoPipelining).toBe(false);
    expect(loadConfig({ REDIS_AUTO_PIPELINING: '1' }).redisAutoPipelining).toBe(true);
    expect(configErrorOf({ REDIS_AUTO_PIPELINING: 'maybe' }).message).toContain('"maybe"');
  });

  it('runs plugin tools in process unless TOOL_ISOLATION=worker; a pool of the cores with 256 MB heaps; refuses calls past 1 s of event-loop lag', () => {
    expect(loadConfig({})).toMatchObject({
      toolIsolation: 'none',
      workerPoolSize: availableParallelism(),
      workerMaxOldGenerationMb: 256,
      maxEventLoopDelayMs: 1000,
    });
    expect(loadConfig({ TOOL_ISOLATION: 'Worker', WORKER_POOL_SIZE: '3', WORKER_MAX_OLD_GENERATION_MB: '64', MAX_EVENT_LOOP_DELAY_MS: '0' })).toMatchObject({
      toolIsolation: 'worker',
      workerPoolSize: 3,
      workerMaxOldGenerationMb: 64,
      maxEventLoopDelayMs: 0,
    });
    expect(configErrorOf({ TOOL_ISOLATION: 'threads' }).message).toBe('TOOL_ISOLATION must be none or worker, got "threads"');
    expect(configErrorOf({ WORKER_POOL_SIZE: '0' }).message).toContain('WORKER_POOL_SIZE');
  });

  it('serves every built-in group unless BUILTINS names some, or none', () => {
    expect([...loadConfig({}).builtins].sort()).toEqual(['introspect', 'planning', 'results', 'search', 'workspace']);
    expect([...loadConfig({ BUILTINS: 'all' }).builtins]).toHaveLength(5);
    expect([...loadConfig({ BUILTINS: 'none' }).builtins]).toEqual([]);
    expect([...loadConfig({ BUILTINS: ' planning, Results ' }).builtins].sort()).toEqual(['planning', 'results']);
    expect(configErrorOf({ BUILTINS: 'planning,files' }).message).toBe(
      'BUILTINS must be all, none, or a comma-separated list of planning, workspace, introspect, results, search, got "planning,files"',
    );
    expect(configErrorOf({ BUILTINS: 'none,planning' }).message).toContain('BUILTINS');
  });
});

describe('secretText (<VAR>_FILE)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolport-secret-'));
  const file = join(dir, 'secret');
  writeFileSync(file, 's3cr3t value\n');

  it('reads the variable, or the file its _FILE names without the trailing newline', () => {
    expect(secretText({ SOME_SECRET: 'inline' }, 'SOME_SECRET')).toBe('inline');
    expect(secretText({ SOME_SECRET_FILE: file }, 'SOME_SECRET')).toBe('s3cr3t value');
    expect(secretText({}, 'SOME_SECRET')).toBeUndefined();
  });

  it('refuses both at once, a missing file and an empty one, naming the variable', () => {
    const errorOf = (env: Record<string, string>) => {
      try {
        secretText(env, 'SOME_SECRET');
      } catch (err) {
        return err as Error;
      }
      throw new Error('expected a ConfigError');
    };
    expect(errorOf({ SOME_SECRET: 'a', SOME_SECRET_FILE: file })).toBeInstanceOf(ConfigError);
    expect(errorOf({ SOME_SECRET: 'a', SOME_SECRET_FILE: file }).message).toContain('SOME_SECRET and SOME_SECRET_FILE are exclusive');
    expect(errorOf({ SOME_SECRET_FILE: join(dir, 'absent') }).message).toMatch(/^SOME_SECRET_FILE ".*absent" cannot be read: ENOENT$/);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(errorOf({ SOME_SECRET_FILE: empty }).message).toContain('is empty');
  });

  it('reads APPROVAL_WEBHOOK_SECRET from APPROVAL_WEBHOOK_SECRET_FILE, as SECRETS_KEY from SECRETS_KEY_FILE', () => {
    expect(loadConfig({ APPROVAL_WEBHOOK_SECRET_FILE: file }).approvalWebhookSecret).toBe('s3cr3t value');
    expect(() => loadConfig({ APPROVAL_WEBHOOK_SECRET: 'x', APPROVAL_WEBHOOK_SECRET_FILE: file })).toThrow(/exclusive/);
  });
});

describe('identity variables', () => {
  it('reads AUTH_ISSUER, PUBLIC_URL (without a trailing slash), AUTH_AUDIENCE and AUTH_GROUPS_CLAIM', () => {
    expect(loadConfig({})).toMatchObject({ authIssuer: null, publicUrl: null, authAudience: null, authGroupsClaim: 'groups' });
    expect(
      loadConfig({ AUTH_ISSUER: 'https://sso.example/realms/a', PUBLIC_URL: 'https://tools.example/', AUTH_GROUPS_CLAIM: 'realm_access.roles' }),
    ).toMatchObject({
      authIssuer: 'https://sso.example/realms/a',
      publicUrl: 'https://tools.example',
      authGroupsClaim: 'realm_access.roles',
    });
  });

  it('stops the start on an issuer without an audience, or a URL that is not one', () => {
    expect(() => loadConfig({ AUTH_ISSUER: 'https://sso.example' })).toThrow(/AUTH_ISSUER needs PUBLIC_URL/);
    expect(() => loadConfig({ AUTH_ISSUER: 'sso.example', PUBLIC_URL: 'https://t.example' })).toThrow(/^AUTH_ISSUER must be an http/);
    expect(() => loadConfig({ PUBLIC_URL: 'ftp://t.example' })).toThrow(/^PUBLIC_URL must be/);
    expect(loadConfig({ AUTH_ISSUER: 'https://sso.example', AUTH_AUDIENCE: 'api://toolport' }).authAudience).toBe('api://toolport');
  });
});

describe('hosts and origins', () => {
  it('reads ALLOWED_HOSTS (null when unset) and CORS_ORIGINS as browsers send origins', () => {
    expect(loadConfig({}).allowedHosts).toBeNull();
    expect(loadConfig({}).corsOrigins).toEqual([]);
    expect(loadConfig({ ALLOWED_HOSTS: ' Toolport, tools.example.com:8443 ,' }).allowedHosts).toEqual(['toolport', 'tools.example.com:8443']);
    expect(loadConfig({ CORS_ORIGINS: 'https://App.example.com/, http://localhost:5173, https://x.example:443' }).corsOrigins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://x.example',
    ]);
  });

  it('stops the start on a CORS origin with a path, a query or another scheme', () => {
    for (const bad of ['https://app.example.com/console', 'app.example.com', 'ftp://app.example.com', 'https://app.example.com?x=1']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).toThrow(/^CORS_ORIGINS must list origins/);
    }
  });
});
