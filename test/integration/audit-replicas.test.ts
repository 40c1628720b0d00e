/**
 * The audit chain across replicas on one real Redis: 1,000 calls shared by a replica in a child
 * process and one in this process make 1,000 entries in one chain, which `toolport audit verify`
 * accepts; an entry edited in Redis is named, and the command exits 1.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { get, makeApp, post } from '../helpers/app.ts';
import { startReplica } from '../helpers/replicas.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CALLS = 1000;
const PARALLEL = 16;

function verify(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/toolport.js', 'audit', 'verify'],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env }, timeout: 60_000 },
      (err, stdout, stderr) => resolve({ code: err === null ? 0 : typeof err.code === 'number' ? err.code : -1, stdout, stderr }),
    );
  });
}

describe('the audit chain over two replicas (redis)', () => {
  const prefix = `audit-replicas-${randomUUID().slice(0, 8)}:`;
  const env = { KEY_PREFIX: prefix, TOOL_PLUGINS: 'examples/plugins/calculator.ts' };
  let child: { port: number };
  let local: FastifyInstance;
  let redis: Redis;

  beforeAll(async () => {
    const starting = startReplica('toolport replica (audit)', env);
    local = await makeApp('redis', { env });
    child = await starting;
    redis = new Redis(inject('redisUrl'));
  }, 120_000);
  afterAll(async () => {
    redis?.disconnect();
    await Promise.all([local?.close(), stopAll()]);
  });

  it('gives one entry per call, in one chain that verifies', async () => {
    let next = 0;
    const worker = async () => {
      while (next < CALLS) {
        const i = next++;
        const body = { name: 'add', arguments: { a: i, b: 1 } };
        if (i % 2 === 0) {
          const response = await fetch(`http://127.0.0.1:${child.port}/tools/invoke`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          expect(((await response.json()) as { success: boolean }).success).toBe(true);
        } else expect((await post(local, body)).body.success).toBe(true);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, worker));
    // Batches are written within 50 ms of their first call.
    const deadline = Date.now() + 10_000;
    while ((await redis.zcard(`${prefix}{audit}:chain`)) < CALLS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await redis.zcard(`${prefix}{audit}:chain`)).toBe(CALLS);

    const page = await get(local, '/audit?kind=call&limit=500');
    expect(page.status).toBe(200);
    expect(page.body.entries).toHaveLength(500);
    expect(page.body.entries[0]).toMatchObject({ seq: CALLS, kind: 'call', tool: 'add', outcome: 'success', caller: null });
    expect(page.body.entries[0].arguments_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(page.body.entries[0]).not.toHaveProperty('arguments');
    const rest = await get(local, `/audit?kind=call&limit=500&cursor=${page.body.next_cursor}`);
    expect(rest.body.entries.at(-1).seq).toBe(1);

    const checked = await verify({ REDIS_URL: inject('redisUrl'), KEY_PREFIX: prefix });
    expect(checked.stderr).toBe('');
    expect(checked.stdout).toBe(`audit chain verified (redis): ${CALLS} entries, entries 1 to ${CALLS}\n`);
    expect(checked.code).toBe(0);
  }, 120_000);

  it('names an entry edited in Redis and exits 1', async () => {
    const key = `${prefix}{audit}:chain`;
    const [member] = await redis.zrangebyscore(key, 500, 500);
    expect(member).toContain('"outcome":"success"');
    await redis.zrem(key, member!);
    await redis.zadd(key, 500, member!.replace('"outcome":"success"', '"outcome":"tool_failed"'));
    const checked = await verify({ REDIS_URL: inject('redisUrl'), KEY_PREFIX: prefix });
    expect(checked.code).toBe(1);
    expect(checked.stderr).toBe('toolport: audit chain broken at entry 500 (redis): entry 500 was changed: its hash does not match its content\n');
  }, 60_000);
});
