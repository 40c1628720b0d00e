/**
 * The one way a Redis connection is made: a single Redis (REDIS_URL), Redis Cluster
 * (REDIS_CLUSTER_NODES) or a primary found through Sentinel (REDIS_SENTINELS). Fails fast instead of
 * hanging (TRAPS.md): no offline queue, a 1 s command timeout, no blind re-send after a reconnect,
 * reconnection in the background forever; and after a failover it finds the new primary by itself:
 * a connection left on a demoted primary (READONLY) reconnects, Sentinel names the new one (ioredis
 * checks the role of what it connects to), a cluster refreshes its slots.
 */
import { Cluster, Redis, type RedisOptions } from 'ioredis';

export const COMMAND_TIMEOUT_MS = 1000;

export interface RedisTarget {
  url?: string | null;
  clusterNodes?: readonly { host: string; port: number }[] | null;
  sentinels?: readonly { host: string; port: number }[] | null;
  sentinelName?: string | null;
  password?: string | null;
  sentinelPassword?: string | null;
  tls?: boolean;
  /** ioredis enableAutoPipelining: the commands of one event-loop turn go out in one write. */
  autoPipelining?: boolean;
  /** Replicas that must hold a guarantee's write (REDIS_REPLICA_ACKS); `auto`: 1 when the primary has one. */
  replicaAcks?: number | 'auto';
  ackTimeoutMs?: number;
}

/** An error that means "this node is no longer the primary": reconnect (without re-sending) to find the new one. */
function demoted(err: Error): boolean {
  return /^(READONLY|LOADING|MASTERDOWN)/.test(err.message);
}

/** How a failed command is told to callers: a failover in words, not Redis' own error text. */
export function failureText(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (/^(READONLY|LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|MOVED|ASK)\b/.test(message)) return 'redis is failing over to a new primary';
  return `redis did not answer: ${message}`;
}

const CLIENT_OPTIONS: RedisOptions = {
  enableOfflineQueue: false,
  commandTimeout: COMMAND_TIMEOUT_MS,
  connectTimeout: COMMAND_TIMEOUT_MS,
  maxRetriesPerRequest: 0,
  autoResendUnfulfilledCommands: false,
  retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
  reconnectOnError: (err) => (demoted(err) ? 1 : false),
};

export function connect(target: RedisTarget): Redis | Cluster {
  const pipelining = { enableAutoPipelining: target.autoPipelining ?? false };
  const secrets = { ...(target.password && { password: target.password }), ...(target.tls && { tls: {} }) };
  if (target.clusterNodes) {
    return new Cluster([...target.clusterNodes], {
      enableOfflineQueue: false,
      redisOptions: { ...CLIENT_OPTIONS, ...secrets },
      // A failed-over slot is found again within a second, not at the default 5 s refresh.
      slotsRefreshInterval: 1000,
      retryDelayOnFailover: 100,
      retryDelayOnClusterDown: 100,
      ...pipelining,
    });
  }
  if (target.sentinels) {
    return new Redis({
      ...CLIENT_OPTIONS,
      ...secrets,
      ...pipelining,
      sentinels: [...target.sentinels],
      name: target.sentinelName ?? 'mymaster',
      ...(target.sentinelPassword && { sentinelPassword: target.sentinelPassword }),
      ...(target.tls && { enableTLSForSentinelMode: true }),
      sentinelRetryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 1000),
      // No failoverDetector: it drops a connection already on the new primary too (a second gap);
      // a dead primary drops it anyway, a demoted one answers READONLY (reconnect above), and a
      // write to a primary cut off from its replicas is not acknowledged (WAIT).
    });
  }
  return new Redis(target.url ?? 'redis://127.0.0.1:6379', { ...CLIENT_OPTIONS, ...pipelining });
}
