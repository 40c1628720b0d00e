/**
 * Once across replicas (docs/ledger.md): two app instances on one Redis, and a replica killed while its
 * handler runs. The ledger keys are shared because the instances share one KEY_PREFIX.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { http200, startChild, stopAll, waitUntilReady } from '../../support/children.ts';
import { freePorts } from '../../support/ports.ts';
import { RedisServer } from '../../support/redis-server.ts';
import { ok } from '../../src/tools/define.ts';
import { makeApp, post } from '../helpers/app.ts';
import { ledgerRuns, registerLedgerTools, runsOf, started as handlerStarted } from '../helpers/ledger-tools.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LEASE_MS = 400;

describe('effect ledger across replicas (redis)', () => {
  const prefix = `replicas-${randomUUID().slice(0, 8)}:`;
  let one: FastifyInstance;
  let two: FastifyInstance;
  beforeAll(async () => {
    const env = { KEY_PREFIX: prefix, LEDGER_LEASE_MS: String(LEASE_MS) };
    // This process's own version of the child's tool: quick, and counted.
    const register = (registry: Parameters<typeof registerLedgerTools>[0]) => {
      registerLedgerTools(registry);
      registry.registerTool({
        name: 'charge_slowly',
        description: 'Charges once; quick in this process.',
        parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
        idempotency: { strategy: 'auto', scope: 'global' },
        handler: (params) => {
          ledgerRuns.set(String(params.tag), runsOf(String(params.tag)) + 1);
          return ok({ where: 'test process' }, 'charged here');
        },
      });
    };
    [one, two] = await Promise.all([makeApp('redis', { env, register }), makeApp('redis', { env, register })]);
  });
  afterAll(async () => {
    await Promise.all([one.close(), two.close(), stopAll()]);
  });

  it('runs the handler once for 100 concurrent identical calls split across two instances', async () => {
    const tag = `split-${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 100 }, (_, i) => post(i % 2 === 0 ? one : two, { name: 'charge_global', arguments: { tag, ms: 200 } })),
    );
    expect(runsOf(tag)).toBe(1);
    expect(results.every((r) => r.status === 200 && r.body.success === true)).toBe(true);
    expect(new Set(results.map((r) => r.body.value.charge_id)).size).toBe(1);
    expect(results.filter((r) => r.body.replayed).length).toBe(99);
  });

  it('renews the lease of a handler that runs longer than the lease', async () => {
    const tag = `renewed-${randomUUID()}`;
    const running = post(one, { name: 'charge_global', arguments: { tag, ms: LEASE_MS * 3 } });
    await handlerStarted(tag);
    await sleep(LEASE_MS * 2);
    const other = await post(two, { name: 'charge_global', arguments: { tag, ms: LEASE_MS * 3 } });
    expect(other.body.replayed).toBe(true);
    expect((await running).body.value).toEqual(other.body.value);
    expect(runsOf(tag)).toBe(1);
  });

  it('renews, on one shared timer, the leases of handlers that started at different times', async () => {
    const tags = [`staggered-a-${randomUUID()}`, `staggered-b-${randomUUID()}`];
    const first = post(one, { name: 'charge_global', arguments: { tag: tags[0], ms: LEASE_MS * 3 } });
    await handlerStarted(tags[0]!);
    await sleep(LEASE_MS / 2);
    const second = post(one, { name: 'charge_global', arguments: { tag: tags[1], ms: LEASE_MS * 3 } });
    await handlerStarted(tags[1]!);
    await sleep(LEASE_MS * 2);
    // Both are still held: the other replica's identical calls wait for them and replay.
    const others = await Promise.all(tags.map((tag) => post(two, { name: 'charge_global', arguments: { tag, ms: LEASE_MS * 3 } })));
    const originals = await Promise.all([first, second]);
    expect(others.map((r) => r.body.replayed)).toEqual([true, true]);
    expect(others.map((r) => r.body.value)).toEqual(originals.map((r) => r.body.value));
    expect(tags.map(runsOf)).toEqual([1, 1]);
  });

  it('keeps one Redis key per entry, under its own hash tag, with the record TTL', async () => {
    const result = await post(one, { name: 'charge_global', arguments: { tag: `keys-${randomUUID()}` } });
    const redis = new Redis(inject('redisUrl'));
    try {
      const entry = `${prefix}{effect:${result.body.idempotency_key}}`;
      expect(await redis.exists(entry)).toBe(1);
      const ttl = await redis.pttl(entry);
      expect(ttl).toBeGreaterThan(86_000_000);
      expect(ttl).toBeLessThanOrEqual(86_400_000);
      expect(await redis.zscore(`${prefix}{effects-of-tool:charge_global}`, result.body.idempotency_key)).not.toBeNull();
    } finally {
      redis.disconnect();
    }
  });

  it('runs the handler again after a replica is killed mid-handler and its lease lapses', async () => {
    const marks = path.join(mkdtempSync(path.join(tmpdir(), 'ledger-')), 'started');
    const [port] = (await freePorts(1)) as [number];
    const child = startChild('toolport replica', process.execPath, ['--import', 'tsx', 'src/server.ts'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PORT: String(port),
        REDIS_URL: inject('redisUrl'),
        KEY_PREFIX: prefix,
        LEDGER_LEASE_MS: String(LEASE_MS),
        LOG_LEVEL: 'warn',
        TOOL_PLUGINS: 'test/fixtures/ledger-plugin.ts',
        LEDGER_TEST_MARKS: marks,
      },
    });
    await waitUntilReady(child, 'GET /readyz → 200', http200(`http://127.0.0.1:${port}/readyz`));
    const tag = `killed-${randomUUID()}`;
    const body = JSON.stringify({ name: 'charge_slowly', arguments: { tag } });
    const inChild = fetch(`http://127.0.0.1:${port}/tools/invoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).catch(
      (err: unknown) => err,
    );
    for (let i = 0; i < 100 && !(existsSync(marks) && readFileSync(marks, 'utf8').includes(tag)); i++) await sleep(20);
    expect(readFileSync(marks, 'utf8')).toContain(tag);

    // While the child runs it, this instance's identical call waits, and gives up at its deadline.
    const waiting = await post(one, { name: 'charge_slowly', arguments: { tag } }, { 'x-timeout-ms': '100' });
    expect(waiting.body.error?.code).toBe('in_progress');

    child.proc.kill('SIGKILL');
    await inChild;
    const started = Date.now();
    const retried = await post(one, { name: 'charge_slowly', arguments: { tag } });
    expect(retried.body).toMatchObject({ success: true, replayed: false, value: { where: 'test process' } });
    expect(Date.now() - started).toBeLessThan(5000); // the lease lapsed, long before the 30 s deadline
    expect(runsOf(tag)).toBe(1);
    const replayed = await post(two, { name: 'charge_slowly', arguments: { tag } });
    expect(replayed.body).toMatchObject({ replayed: true, effect_id: retried.body.effect_id });
  });
});

describe('effect ledger with Redis down', () => {
  it('answers 503 fast instead of running an effect it cannot record, and recovers', async () => {
    const redis = await RedisServer.start();
    const app = await makeApp('redis', { redisUrl: redis.url, register: registerLedgerTools });
    try {
      const tag = `outage-${randomUUID()}`;
      await redis.stop();
      await sleep(100);
      const started = Date.now();
      const refused = await post(app, { name: 'charge_global', arguments: { tag } });
      expect(refused.status).toBe(503);
      expect(refused.body.type).toBe('urn:toolport:problem:store-unavailable');
      expect(Date.now() - started).toBeLessThan(1500);
      expect(runsOf(tag)).toBe(0);
      await redis.restart();
      for (let i = 0; i < 80 && (await app.inject({ method: 'GET', url: '/readyz' })).statusCode !== 200; i++) await sleep(100);
      expect((await post(app, { name: 'charge_global', arguments: { tag } })).body.success).toBe(true);
      expect(runsOf(tag)).toBe(1);
    } finally {
      await app.close();
      await redis.stop();
    }
  });
});
