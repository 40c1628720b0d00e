/** Picks the store from the configuration: Redis when REDIS_URL or REDIS_CLUSTER_NODES is set, else memory. */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { MemoryStore } from './memory.ts';
import { RedisStore } from './redis.ts';
import type { Store } from './types.ts';

export { StoreUnavailableError, type Store } from './types.ts';

export async function createStore(config: Config, log: Logger): Promise<Store> {
  const options = {
    keyPrefix: config.keyPrefix,
    sessionTtlS: config.sessionTtlS,
    sessionMaxEvents: config.sessionMaxEvents,
  };
  if (config.redisUrl === null && config.redisClusterNodes === null) return new MemoryStore(options);
  const store = new RedisStore({ url: config.redisUrl, clusterNodes: config.redisClusterNodes, autoPipelining: config.redisAutoPipelining }, options, log);
  if (!(await store.waitUntilReady())) log.error('redis is not reachable yet: /readyz answers 503 and store-backed calls 503 until it is');
  return store;
}
