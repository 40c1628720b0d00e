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
import { get, makeApp, post } from '../helpers/app.ts';
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
      const quick = {
        description: 'Charges once; quick in this process.',
        parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
        idempotency: { strategy: 'auto', scope: 'global' },
        handler: (params: Record<string, unknown>) => {
          ledgerRuns.set(String(params.tag), runsOf(String(params.tag)) + 1);
          return ok({ where: 'test process' }, 'charged here');
        },
      } as const;
      registry.registerTool({ name: 'charge_slowly', on_lost: 'rerun', ...quick });
      registry.registerTool({ name: 'charge_unsure', ...quick });
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

  it('after a replica is killed mid-handler: runs a rerun tool again once, and answers outcome_unknown for the others until an admin resolves it', async () => {
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
    await waitUntilReady(child, 'GET /readyz → 200', http200(`http://127.0.0.1:${port}/readyz`), 90_000);
    const id = randomUUID();
    const calls = { rerun: ['charge_slowly', `rerun-${id}`], ran: ['charge_unsure', `ran-${id}`], notRan: ['charge_unsure', `not-ran-${id}`] } as const;
    const inChild = Object.values(calls).map(([name, tag]) =>
      fetch(`http://127.0.0.1:${port}/tools/invoke`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name, arguments: { tag } }),
      }).catch((err: unknown) => err),
    );
    const allStarted = () => existsSync(marks) && Object.values(calls).every(([, tag]) => readFileSync(marks, 'utf8').includes(tag));
    for (let i = 0; i < 250 && !allStarted(); i++) await sleep(20);
    expect(allStarted()).toBe(true);

    // While the child runs it, this instance's identical call waits, and gives up at its deadline.
    const waiting = await post(one, { name: 'charge_slowly', arguments: { tag: calls.rerun[1] } }, { 'x-timeout-ms': '100' });
    expect(waiting.body.error?.code).toBe('in_progress');

    child.proc.kill('SIGKILL');
    await Promise.all(inChild);
    const killedAt = Date.now();
    // on_lost: rerun — the next identical call runs once, as soon as the lease lapses.
    const retried = await post(one, { name: 'charge_slowly', arguments: { tag: calls.rerun[1] } });
    expect(retried.body).toMatchObject({ success: true, replayed: false, value: { where: 'test process' } });
    expect(Date.now() - killedAt).toBeLessThan(5000); // the lease lapsed, long before the 30 s deadline
    expect(runsOf(calls.rerun[1])).toBe(1);
    expect((await post(two, { name: 'charge_slowly', arguments: { tag: calls.rerun[1] } })).body).toMatchObject({
      replayed: true,
      effect_id: retried.body.effect_id,
    });

    // on_lost: unknown (the default) — nothing runs; every identical call says so until resolved.
    for (const [, tag] of [calls.ran, calls.notRan]) {
      for (const app of [one, two]) {
        const lost = await post(app, { name: 'charge_unsure', arguments: { tag } });
        expect(lost.body).toMatchObject({ success: false, error: { code: 'outcome_unknown' } });
        expect(lost.body.effect_id).toEqual(expect.any(String));
        expect(Date.parse(lost.body.lost_at)).toBeLessThan(killedAt);
      }
      expect(runsOf(tag)).toBe(0);
    }
    const listed = (await get(one, '/ledger/unknown')).body.unknown as { idempotency_key: string; tool_name: string; effect_id: string }[];
    const mine = listed.filter((entry) => entry.tool_name === 'charge_unsure' && entry.idempotency_key.startsWith('global:charge_unsure:'));
    expect(mine.length).toBeGreaterThanOrEqual(2);
    const keyOf = async (tag: string) => (await post(one, { name: 'charge_unsure', arguments: { tag } })).body.idempotency_key as string;
    const [ranKey, notRanKey] = [await keyOf(calls.ran[1]), await keyOf(calls.notRan[1])];
    const ranLost = mine.find((entry) => entry.idempotency_key === ranKey)!;
    expect(ranLost).toBeDefined();
    // Counted once each, by whichever replica saw the lapse first (its sweep, or a call).
    const counted = async (app: FastifyInstance) =>
      Number(/toolport_ledger_unknown_total\{tool="charge_unsure"\} (\d+)/.exec((await get(app, '/metrics')).text)?.[1] ?? 0);
    expect((await counted(one)) + (await counted(two))).toBe(2);

    // "It ran": the next identical call replays what the admin says it answered, under the lost run's id.
    const ran = { outcome: 'ran', result: { message: 'charged (confirmed by the provider)', value: { where: 'child' } } };
    expect((await post(two, ran, {}, `/ledger/effects/${encodeURIComponent(ranKey)}/resolve`)).body).toEqual({ resolved: 'ran' });
    expect((await post(one, { name: 'charge_unsure', arguments: { tag: calls.ran[1] } })).body).toMatchObject({
      success: true,
      replayed: true,
      effect_id: ranLost.effect_id,
      value: { where: 'child' },
    });
    // "It did not run": the next identical call runs, once.
    expect((await post(one, { outcome: 'not_ran' }, {}, `/ledger/effects/${encodeURIComponent(notRanKey)}/resolve`)).body).toEqual({ resolved: 'not_ran' });
    expect((await post(two, { name: 'charge_unsure', arguments: { tag: calls.notRan[1] } })).body).toMatchObject({ success: true, replayed: false });
    expect((await post(one, { name: 'charge_unsure', arguments: { tag: calls.notRan[1] } })).body).toMatchObject({ success: true, replayed: true });
    expect(runsOf(calls.notRan[1])).toBe(1);
    expect(runsOf(calls.ran[1])).toBe(0);
    // Resolved twice: nothing is unknown under that key any more.
    expect((await post(one, { outcome: 'not_ran' }, {}, `/ledger/effects/${encodeURIComponent(ranKey)}/resolve`)).status).toBe(404);
  });

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
