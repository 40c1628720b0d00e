/** Picks the store from the configuration: the first backend the configuration selects (memory takes what is left). */
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { memoryBackend } from './memory/store.ts';
import { redisBackend } from './redis/store.ts';
import type { Store, StoreBackend } from './types.ts';

export { type RateCounter, type Store } from './types.ts';

/** A new backend is one folder beside memory/ and redis/, and one entry here. */
const BACKENDS: readonly StoreBackend[] = [redisBackend, memoryBackend];

export async function createStore(config: Config, log: Logger): Promise<Store> {
  const options = {
    keyPrefix: config.keyPrefix,
    sessionTtlS: config.sessionTtlS,
    sessionMaxEvents: config.sessionMaxEvents,
    auditTtlMs: config.auditTtlDays * 86_400_000,
  };
  const backend = BACKENDS.find((candidate) => candidate.selected(config)) ?? memoryBackend;
  return backend.open(config, options, log);
}
