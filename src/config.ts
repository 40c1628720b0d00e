/**
 * Environment → one frozen, typed Config. A bad value stops the start with one line naming the
 * variable. A secret variable may come from a file instead (`<VAR>_FILE`, as Docker secrets do).
 */
import { availableParallelism } from 'node:os';
import { ConfigError } from './errors.ts';
import { flag, integer, secretText, text, type Env } from './env.ts';

export { secretText } from './env.ts';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly redisUrl: string | null;
  readonly redisClusterNodes: readonly { host: string; port: number }[] | null;
  /** REDIS_SENTINELS: the sentinels that name the primary called REDIS_SENTINEL_NAME (docs/operations.md). */
  readonly redisSentinels: readonly { host: string; port: number }[] | null;
  readonly redisSentinelName: string | null;
  /** REDIS_PASSWORD / REDIS_SENTINEL_PASSWORD / REDIS_TLS: for Sentinel and Cluster (a REDIS_URL carries its own). */
  readonly redisPassword: string | null;
  readonly redisSentinelPassword: string | null;
  readonly redisTls: boolean;
  /** REDIS_REPLICA_ACKS: replicas that must hold a guarantee's write before it counts; `auto`: 1 when the primary has one. */
  readonly redisReplicaAcks: number | 'auto';
  /** REDIS_ACK_TIMEOUT_MS: how long such a write waits for those replicas. */
  readonly redisAckTimeoutMs: number;
  readonly keyPrefix: string;
  readonly toolPlugins: readonly string[];
  /** TOOL_ISOLATION: where plugin tools' handlers run unless their plugin or definition says (docs/plugins.md). */
  readonly toolIsolation: 'none' | 'worker';
  /** WORKER_POOL_SIZE: worker threads for isolated handlers (default: the cores). */
  readonly workerPoolSize: number;
  /** WORKER_MAX_OLD_GENERATION_MB: each worker's heap limit; a handler past it answers tool_crashed. */
  readonly workerMaxOldGenerationMb: number;
  /** MAX_EVENT_LOOP_DELAY_MS: past this event-loop lag, new calls answer 503 (0: never). */
  readonly maxEventLoopDelayMs: number;
  /** TOOLS_FILE: a YAML or JSON file of tool sources (docs/tool-sources.md). */
  readonly toolsFile: string | null;
  readonly apiKeysFile: string | null;
  readonly workspaceRoot: string | null;
  /** BUILTINS: the built-in tool groups served (docs/plugins-and-sources.md). */
  readonly builtins: ReadonlySet<BuiltinGroup>;
  readonly logLevel: string;
  readonly sessionTtlS: number;
  readonly sessionMaxEvents: number;
  readonly maxBodyBytes: number;
  readonly maxContentChars: number;
  readonly defaultTimeoutMs: number;
  /** How long the whole of a cut result stays readable (docs/large-results.md). */
  readonly resultTtlS: number;
  /** How long SIGTERM waits for in-flight calls before exiting anyway. */
  readonly shutdownGraceMs: number;
  /** Effect ledger lease: how long a dead replica's call blocks identical calls at most. */
  readonly ledgerLeaseMs: number;
  /** Send the Redis commands issued in one event-loop turn as one write (the Redis client's auto-pipelining). */
  readonly redisAutoPipelining: boolean;
  /** OpenTelemetry tracing is on (an OTLP endpoint or a traces exporter is set, docs/tracing.md). */
  readonly tracing: boolean;
  /** TOOLPORT_TRACE_ARGUMENTS: call arguments and error details on spans (debugging only: they may hold secrets). */
  readonly traceArguments: boolean;
  /** How long a finished task is kept (docs/tasks.md). */
  readonly taskTtlS: number;
  /** A task's deadline when neither its caller nor its tool sets one. */
  readonly taskTimeoutMs: number;
  /** A task runner's lease: how soon another replica takes over the task of a replica that died. */
  readonly taskLeaseMs: number;
  /** How many times a task is started at most, counting runs cut short by a replica that died. */
  readonly taskMaxAttempts: number;
  /** How many tasks one replica runs at once; the rest wait, queued, for a free slot on any replica. */
  readonly taskConcurrency: number;
  /** 2026-07-28 MCP clients with the tasks extension: a call not done within this long is answered with a task (0: always). */
  readonly mcpTaskInlineMs: number;
  /** /readyz answers 503 while an MCP server behind toolport is down (default: it only names it). */
  readonly readyRequiresUpstreams: boolean;
  /** AUTH_ISSUER: the OpenID Connect issuer whose JWT access tokens name users (docs/identity.md); null = API keys only. */
  readonly authIssuer: string | null;
  /** AUTH_AUDIENCE: what a token's `aud` must contain; null = PUBLIC_URL or PUBLIC_URL/mcp. */
  readonly authAudience: string | null;
  /** AUTH_GROUPS_CLAIM: the claim (a dotted path reaches inside objects) holding a user's groups. */
  readonly authGroupsClaim: string;
  /** PUBLIC_URL: where clients reach this service, without a trailing slash. */
  readonly publicUrl: string | null;
  /** SECRETS_KEY: the 32-byte key that seals credentials at rest; SECRETS_KEY_PREVIOUS still opens them. */
  readonly secretsKey: Buffer | null;
  readonly secretsKeyPrevious: Buffer | null;
  /** How long an approval waits for a decision when its rule sets no ttl_s, and how long outcomes stay after (docs/approvals.md). */
  readonly approvalTtlS: number;
  /** Where every new approval and decision is POSTed; null: nowhere. */
  readonly approvalWebhookUrl: string | null;
  /** The HMAC-SHA256 key of the webhook's X-Toolport-Signature; null: unsigned. */
  readonly approvalWebhookSecret: string | null;
  /** The audit log (docs/audit.md): AUDIT_LOG (on unless false), AUDIT_FILE (JSON lines; null: none), AUDIT_ARGUMENTS (not only their hash), AUDIT_TTL_DAYS. */
  readonly auditLog: boolean;
  readonly auditFile: string | null;
  readonly auditArguments: boolean;
  readonly auditTtlDays: number;
  /** ALLOWED_HOSTS: Host names answered besides the loopback ones and PUBLIC_URL's (`*`: any); null: not set (docs/operations.md). */
  readonly allowedHosts: readonly string[] | null;
  /** CORS_ORIGINS: origins (scheme://host[:port]) that may call from a browser, with CORS; empty: none but the service's own. */
  readonly corsOrigins: readonly string[];
  /** CODE_MODE: code_api and code_run for every caller (docs/code-mode.md); a toolset's `code_mode: true` adds them to it alone. */
  readonly codeMode: boolean;
  /** A program's limits: CODE_MEMORY_MB, CODE_TIME_MS, CODE_MAX_CALLS, CODE_MAX_OUTPUT_CHARS, CODE_REPLAY_S for its calls' records; CODE_WORKERS programs at once. */
  readonly code: Readonly<{ memoryMb: number; timeMs: number; maxCalls: number; maxOutputChars: number; replayS: number; workers: number }>;
}

export const BUILTIN_GROUPS = ['planning', 'workspace', 'introspect', 'results', 'search'] as const;
export type BuiltinGroup = (typeof BUILTIN_GROUPS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

/** 32 bytes as 64 hex characters or base64 (standard or URL-safe); null when it is neither. */
export function parseSecretsKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)) return null;
  const bytes = Buffer.from(trimmed.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === 32 ? bytes : null;
}

function secretsKey(env: Env, name: string): Buffer | null {
  const raw = secretText(env, name);
  if (raw === undefined) return null;
  const key = parseSecretsKey(raw);
  if (key === null) throw new ConfigError(`${name} must be 32 bytes written as 64 hex characters or as base64 (e.g. openssl rand -hex 32)`);
  return key;
}

function redisUrl(env: Env): string | null {
  const raw = text(env, 'REDIS_URL');
  if (raw === undefined) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${raw}"`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${raw}"`);
  }
  return raw;
}

function hostPorts(env: Env, name: string): { host: string; port: number }[] | null {
  const raw = text(env, name);
  if (raw === undefined) return null;
  return raw.split(',').map((entry) => {
    const match = /^\s*([^\s:]+|\[[0-9a-fA-F:]+\]):(\d{1,5})\s*$/.exec(entry);
    const port = Number(match?.[2]);
    if (!match?.[1] || port < 1 || port > 65535) {
      throw new ConfigError(`${name} must be host:port,host:port…, got "${raw}"`);
    }
    return { host: match[1].replace(/^\[|\]$/g, ''), port };
  });
}

type RedisHa = Pick<
  Config,
  'redisSentinels' | 'redisSentinelName' | 'redisPassword' | 'redisSentinelPassword' | 'redisTls' | 'redisReplicaAcks' | 'redisAckTimeoutMs'
>;

/** Sentinel, passwords, TLS and replica acknowledgements; exactly one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS. */
function redisHa(env: Env, url: string | null, cluster: unknown): RedisHa {
  const sentinels = hostPorts(env, 'REDIS_SENTINELS');
  const given = [url !== null && 'REDIS_URL', cluster !== null && 'REDIS_CLUSTER_NODES', sentinels !== null && 'REDIS_SENTINELS'].filter(Boolean);
  if (given.length > 1) throw new ConfigError(`${given.join(' and ')} are exclusive: set one of them`);
  const name = text(env, 'REDIS_SENTINEL_NAME') ?? null;
  if ((sentinels === null) !== (name === null)) throw new ConfigError('REDIS_SENTINELS and REDIS_SENTINEL_NAME go together: set both or neither');
  const password = secretText(env, 'REDIS_PASSWORD') ?? null;
  const sentinelPassword = secretText(env, 'REDIS_SENTINEL_PASSWORD') ?? null;
  const tls = flag(env, 'REDIS_TLS', false);
  if (sentinelPassword !== null && sentinels === null) throw new ConfigError('REDIS_SENTINEL_PASSWORD needs REDIS_SENTINELS');
  if (url !== null && (password !== null || tls)) {
    throw new ConfigError('REDIS_PASSWORD and REDIS_TLS are for REDIS_SENTINELS and REDIS_CLUSTER_NODES: put them in REDIS_URL (rediss://:password@host)');
  }
  const acks = text(env, 'REDIS_REPLICA_ACKS')?.toLowerCase() ?? 'auto';
  if (acks !== 'auto' && !/^\d{1,2}$/.test(acks)) throw new ConfigError(`REDIS_REPLICA_ACKS must be auto or a whole number from 0 to 99, got "${acks}"`);
  return {
    redisSentinels: sentinels === null ? null : Object.freeze(sentinels),
    redisSentinelName: name,
    redisPassword: password,
    redisSentinelPassword: sentinelPassword,
    redisTls: tls,
    redisReplicaAcks: acks === 'auto' ? 'auto' : Number(acks),
    redisAckTimeoutMs: integer(env, 'REDIS_ACK_TIMEOUT_MS', 500, 1, 60_000),
  };
}

/** BUILTINS: comma-separated groups, or `all` (the default) or `none` alone. */
function builtinGroups(env: Env): ReadonlySet<BuiltinGroup> {
  const raw = text(env, 'BUILTINS') ?? 'all';
  const names = items(raw.toLowerCase());
  if (names.length === 1 && names[0] === 'all') return new Set(BUILTIN_GROUPS);
  if (names.length === 1 && names[0] === 'none') return new Set<BuiltinGroup>();
  const unknown = names.filter((name) => !(BUILTIN_GROUPS as readonly string[]).includes(name));
  if (names.length === 0 || unknown.length > 0) {
    throw new ConfigError(`BUILTINS must be all, none, or a comma-separated list of ${BUILTIN_GROUPS.join(', ')}, got "${raw}"`);
  }
  return new Set(names as BuiltinGroup[]);
}

function isolation(env: Env): 'none' | 'worker' {
  const raw = text(env, 'TOOL_ISOLATION')?.toLowerCase() ?? 'none';
  if (raw !== 'none' && raw !== 'worker') throw new ConfigError(`TOOL_ISOLATION must be none or worker, got "${env.TOOL_ISOLATION}"`);
  return raw;
}

function httpUrl(env: Env, name: string): string | null {
  const raw = text(env, name);
  if (raw === undefined) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // refused below
  }
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`${name} must be an http:// or https:// URL without query or fragment, got "${raw}"`);
  }
  return raw;
}

/** The non-empty, trimmed items of a comma-separated value. */
function items(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

function commaList(env: Env, name: string): string[] {
  return items(text(env, name) ?? '');
}

/** `scheme://host[:port]` as browsers send it in Origin (lower case, default port dropped). */
function originOf(raw: string, name: string): string {
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    // refused below
  }
  if (
    url === null ||
    (url.protocol !== 'https:' && url.protocol !== 'http:') ||
    url.pathname !== '/' ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== ''
  ) {
    throw new ConfigError(`${name} must list origins such as https://app.example.com (scheme, host and port only), got "${raw}"`);
  }
  return url.origin;
}

const set = (env: Env, name: string) => (env[name] ?? '').trim() !== '';

/**
 * OpenTelemetry tracing (docs/tracing.md) is on when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT
 * or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), or OTEL_TRACES_EXPORTER names an exporter (console,
 * zipkin…) — unless OTEL_SDK_DISABLED is true or OTEL_TRACES_EXPORTER is `none`. The SDK reads
 * the rest of OpenTelemetry's variables itself.
 */
export function tracingWanted(env: Env): boolean {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return false;
  const exporters = commaList(env, 'OTEL_TRACES_EXPORTER');
  if (exporters.includes('none')) return false;
  return exporters.length > 0 || set(env, 'OTEL_EXPORTER_OTLP_ENDPOINT') || set(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
}

export function loadConfig(env: Env = process.env): Config {
  const logLevel = text(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const keyPrefix = env.KEY_PREFIX ?? 'toolport:';
  if (!/^[^\s{}]{0,64}$/.test(keyPrefix)) {
    throw new ConfigError(`KEY_PREFIX must be at most 64 characters without spaces or braces, got "${keyPrefix}"`);
  }
  const redis = redisUrl(env);
  const cluster = hostPorts(env, 'REDIS_CLUSTER_NODES');
  const authIssuer = httpUrl(env, 'AUTH_ISSUER');
  const publicUrl = httpUrl(env, 'PUBLIC_URL')?.replace(/\/+$/, '') ?? null;
  const authAudience = text(env, 'AUTH_AUDIENCE') ?? null;
  if (authIssuer !== null && publicUrl === null && authAudience === null) {
    throw new ConfigError('AUTH_ISSUER needs PUBLIC_URL (or AUTH_AUDIENCE): the audience tokens must be issued for');
  }
  return Object.freeze({
    authIssuer,
    authAudience,
    authGroupsClaim: text(env, 'AUTH_GROUPS_CLAIM') ?? 'groups',
    publicUrl,
    port: integer(env, 'PORT', 8080, 0, 65535),
    host: text(env, 'HOST') ?? '127.0.0.1',
    redisUrl: redis,
    redisClusterNodes: cluster === null ? null : Object.freeze(cluster),
    ...redisHa(env, redis, cluster),
    keyPrefix,
    toolPlugins: Object.freeze(commaList(env, 'TOOL_PLUGINS')),
    toolIsolation: isolation(env),
    workerPoolSize: integer(env, 'WORKER_POOL_SIZE', availableParallelism(), 1, 1024),
    workerMaxOldGenerationMb: integer(env, 'WORKER_MAX_OLD_GENERATION_MB', 256, 16, 64 * 1024),
    maxEventLoopDelayMs: integer(env, 'MAX_EVENT_LOOP_DELAY_MS', 1000, 0, 3_600_000),
    toolsFile: text(env, 'TOOLS_FILE') ?? null,
    apiKeysFile: text(env, 'API_KEYS_FILE') ?? null,
    workspaceRoot: text(env, 'WORKSPACE_ROOT') ?? null,
    builtins: builtinGroups(env),
    logLevel,
    sessionTtlS: integer(env, 'SESSION_TTL_S', 86400, 1, 365 * 86400),
    sessionMaxEvents: integer(env, 'SESSION_MAX_EVENTS', 1000, 1, 1_000_000),
    maxBodyBytes: integer(env, 'MAX_BODY_BYTES', 1_048_576, 1024, 1024 * 1024 * 1024),
    maxContentChars: integer(env, 'MAX_CONTENT_CHARS', 100_000, 200, 100_000_000),
    resultTtlS: integer(env, 'RESULT_TTL_S', 3600, 1, 30 * 86400),
    defaultTimeoutMs: integer(env, 'DEFAULT_TIMEOUT_MS', 30_000, 1, 24 * 3600 * 1000),
    shutdownGraceMs: integer(env, 'SHUTDOWN_GRACE_MS', 10_000, 0, 3600 * 1000),
    ledgerLeaseMs: integer(env, 'LEDGER_LEASE_MS', 10_000, 100, 3600 * 1000),
    redisAutoPipelining: flag(env, 'REDIS_AUTO_PIPELINING', true),
    tracing: tracingWanted(env),
    traceArguments: flag(env, 'TOOLPORT_TRACE_ARGUMENTS', false),
    taskTtlS: integer(env, 'TASK_TTL_S', 86_400, 1, 365 * 86_400),
    taskTimeoutMs: integer(env, 'TASK_TIMEOUT_MS', 3_600_000, 1, 7 * 86_400_000),
    taskLeaseMs: integer(env, 'TASK_LEASE_MS', 10_000, 100, 3_600_000),
    taskMaxAttempts: integer(env, 'TASK_MAX_ATTEMPTS', 3, 1, 100),
    taskConcurrency: integer(env, 'TASK_CONCURRENCY', 32, 1, 10_000),
    mcpTaskInlineMs: integer(env, 'MCP_TASK_INLINE_MS', 1000, 0, 60_000),
    readyRequiresUpstreams: flag(env, 'READY_REQUIRES_UPSTREAMS', false),
    secretsKey: secretsKey(env, 'SECRETS_KEY'),
    secretsKeyPrevious: secretsKey(env, 'SECRETS_KEY_PREVIOUS'),
    approvalTtlS: integer(env, 'APPROVAL_TTL_S', 86_400, 1, 30 * 86_400),
    approvalWebhookUrl: httpUrl(env, 'APPROVAL_WEBHOOK_URL'),
    approvalWebhookSecret: secretText(env, 'APPROVAL_WEBHOOK_SECRET') ?? null,
    auditLog: flag(env, 'AUDIT_LOG', true),
    auditFile: text(env, 'AUDIT_FILE') ?? null,
    auditArguments: flag(env, 'AUDIT_ARGUMENTS', false),
    auditTtlDays: integer(env, 'AUDIT_TTL_DAYS', 90, 1, 36_500),
    allowedHosts: text(env, 'ALLOWED_HOSTS') === undefined ? null : Object.freeze(commaList(env, 'ALLOWED_HOSTS').map((h) => h.toLowerCase())),
    corsOrigins: Object.freeze(commaList(env, 'CORS_ORIGINS').map((origin) => originOf(origin, 'CORS_ORIGINS'))),
    codeMode: flag(env, 'CODE_MODE', false),
    code: Object.freeze({
      memoryMb: integer(env, 'CODE_MEMORY_MB', 64, 8, 1024),
      timeMs: integer(env, 'CODE_TIME_MS', 30_000, 100, 3_600_000),
      maxCalls: integer(env, 'CODE_MAX_CALLS', 100, 1, 100_000),
      maxOutputChars: integer(env, 'CODE_MAX_OUTPUT_CHARS', 100_000, 100, 100_000_000),
      replayS: integer(env, 'CODE_REPLAY_S', 3600, 1, 30 * 86_400),
      workers: integer(env, 'CODE_WORKERS', 8, 1, 256),
    }),
  });
}
