/**
 * Looks for secrets where they must never be in plain text: every key of a test's prefix in the
 * real Redis (its DUMP and, for strings, hashes, lists and sets, its values) and the lines a test's
 * logger wrote.
 */
import { Writable } from 'node:stream';
import { Redis } from 'ioredis';
import { pino, type Logger } from 'pino';
import { expect, inject } from 'vitest';

export interface CollectedLogs {
  lines: string[];
  stream: Writable;
  /** A debug-level logger writing into `lines`. */
  logger: Logger;
  text(): string;
}

export function collectLogs(): CollectedLogs {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { lines, stream, logger: pino({ level: 'debug' }, stream), text: () => lines.join('') };
}

async function valuesOf(redis: Redis, key: string): Promise<string> {
  switch (await redis.type(key)) {
    case 'string':
      return (await redis.get(key)) ?? '';
    case 'hash':
      return JSON.stringify(await redis.hgetall(key));
    case 'list':
      return JSON.stringify(await redis.lrange(key, 0, -1));
    case 'set':
      return JSON.stringify(await redis.smembers(key));
    case 'zset':
      return JSON.stringify(await redis.zrange(key, '0', '-1'));
    case 'stream':
      return JSON.stringify(await redis.xrange(key, '-', '+'));
    default:
      return '';
  }
}

/**
 * Fails when any of `secrets` appears in a key of `redisPrefix` or in `log`. `expectKeys` names a
 * key fragment that must be found, so that a scan of nothing does not pass.
 */
export async function expectNoSecretsIn(options: { redisPrefix?: string; expectKeys?: string; log?: string; secrets: readonly string[] }): Promise<void> {
  const secrets = options.secrets.filter((s) => s.length >= 8);
  expect(secrets.length, 'the scan has secrets to look for').toBeGreaterThan(0);
  if (options.log !== undefined) {
    expect(options.log.length, 'the log has lines').toBeGreaterThan(0);
    for (const secret of secrets) expect(options.log.includes(secret), 'the log holds a secret in plain text').toBe(false);
  }
  if (options.redisPrefix === undefined) return;
  const redis = new Redis(inject('redisUrl'));
  try {
    const keys = await redis.keys(`${options.redisPrefix}*`);
    expect(keys.length, 'the prefix has keys').toBeGreaterThan(0);
    if (options.expectKeys !== undefined)
      expect(
        keys.some((k) => k.includes(options.expectKeys!)),
        `a key with ${options.expectKeys}`,
      ).toBe(true);
    for (const key of keys) {
      const dumped = ((await redis.dumpBuffer(key)) ?? Buffer.alloc(0)).toString('latin1');
      const text = await valuesOf(redis, key);
      for (const secret of secrets) {
        expect(dumped.includes(secret), `${key} holds a secret (dump)`).toBe(false);
        expect(text.includes(secret), `${key} holds a secret`).toBe(false);
      }
    }
  } finally {
    redis.disconnect();
  }
}
