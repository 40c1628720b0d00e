/**
 * One throwaway redis-server for the whole run (never the shared one on 6379), or REDIS_URL when set.
 * Tests give every app its own KEY_PREFIX, so nothing is ever flushed.
 */
import type { TestProject } from 'vitest/node';
import { RedisServer } from '../../support/redis-server.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.REDIS_URL;
  if (given !== undefined && given !== '') {
    project.provide('redisUrl', given);
    return async () => {};
  }
  const server = await RedisServer.start();
  project.provide('redisUrl', server.url);
  return () => server.stop();
}
