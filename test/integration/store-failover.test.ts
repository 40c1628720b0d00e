/**
 * Failures of the store (docs/operations.md): three toolport replicas under a continuous load of
 * effectful calls, each with its own key and retried until answered, while the Redis primary is
 * killed (kill -9) — on Sentinel and on Redis Cluster. No effect runs twice (counted at the handler,
 * across processes); successes before the kill replay after it; sessions committed before it are
 * intact; every replica serves again within 10 s of the promotion. Then, with the replicas paused
 * (SIGSTOP), effectful calls answer 503 store_not_durable and run nothing.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopAll } from '../../support/children.ts';
import { RedisCluster } from '../../support/redis-cluster.ts';
import { RedisSentinel } from '../../support/redis-sentinel.ts';
import { startReplica } from '../helpers/replicas.ts';
import { pino } from 'pino';
import { RedisStore } from '../../src/store/redis/store.ts';
import { StoreUnavailable } from '../../src/errors.ts';

const LOAD_WORKERS = 6;
const RECOVERY_LIMIT_MS = 10_000;

interface Answer {
  status: number;
  body: Record<string, any>;
}

async function call(port: number, body: unknown, headers: Record<string, string> = {}, url = '/tools/invoke'): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

async function read(port: number, url: string): Promise<Answer> {
  const response = await fetch(`http://127.0.0.1:${port}${url}`, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** What one key's call came to: its first answer, when, and how many attempts it took. */
interface Outcome {
  tag: string;
  answer: Answer;
  answeredAt: number;
  attempts: number;
}

/** A call retried (on the next replica) until it is answered with a tool result; 503s are retried. */
async function untilAnswered(ports: number[], tag: string, first: number, seen503: (at: number) => void): Promise<Outcome> {
  for (let attempt = 1; ; attempt++) {
    const port = ports[(first + attempt) % ports.length]!;
    const answer = await call(port, { name: 'chaos_charge', arguments: { tag } }).catch((err: unknown) => ({ status: 0, body: { error: String(err) } }));
    if (answer.status === 200) return { tag, answer, answeredAt: Date.now(), attempts: attempt };
    expect([0, 503]).toContain(answer.status); // never a 500 (0: the connection failed)
    if (answer.status === 503) seen503(Date.now());
    await sleep(100);
  }
}

interface Topology {
  label: string;
  env: Record<string, string>;
  /** kill -9 of the primary serving the keys under load; resolves when a replica is promoted (Date.now()). */
  fail(): Promise<number>;
}

/** Runs the chaos test on one topology; returns its counts for the report. */
async function chaos(topology: Topology): Promise<Record<string, number>> {
  const marks = path.join(mkdtempSync(path.join(tmpdir(), 'chaos-')), 'runs');
  writeFileSync(marks, '');
  const env = { ...topology.env, REDIS_URL: '', KEY_PREFIX: `chaos-${randomUUID().slice(0, 8)}:`, LEDGER_LEASE_MS: '1000' };
  const replicas = await Promise.all(
    [1, 2, 3].map((i) => startReplica(`toolport ${topology.label} ${i}`, { ...env, TOOL_PLUGINS: 'test/fixtures/chaos-plugin.ts', CHAOS_TEST_MARKS: marks })),
  );
  const ports = replicas.map((r) => r.port);
  // Sessions committed before the kill.
  const sessions = Array.from({ length: 6 }, (_, i) => `chaos-${i}-${randomUUID()}`);
  for (const [i, session] of sessions.entries()) {
    const made = await call(ports[i % 3]!, { name: 'planning_setup_plan', arguments: { objective: `keep ${session}` } }, { 'x-session-id': session });
    expect(made.body.success).toBe(true);
  }

  const outcomes: Outcome[] = [];
  let stop = false;
  let killedAt = Infinity;
  let last503 = 0;
  let n = 0;
  const workers = Array.from({ length: LOAD_WORKERS }, async (_, w) => {
    while (!stop) {
      const tag = `${topology.label}-${w}-${n++}-${randomUUID().slice(0, 8)}`;
      outcomes.push(await untilAnswered(ports, tag, w, (at) => (last503 = Math.max(last503, at))));
    }
  });
  await sleep(1500);
  const before = outcomes.length;
  killedAt = Date.now();
  const promotedAt = await topology.fail();
  // Every replica serves again: a fresh call on each succeeds.
  const back = await Promise.all(
    ports.map(async (port) => {
      for (;;) {
        const answer = await call(port, { name: 'chaos_charge', arguments: { tag: `probe-${randomUUID()}` } }).catch((): Answer => ({ status: 0, body: {} }));
        if (answer.status === 200 && answer.body.success === true) return Date.now();
        await sleep(50);
      }
    }),
  );
  await sleep(1000);
  stop = true;
  await Promise.all(workers);
  const backAt = Math.max(...back);

  // Runs at the handler, per tag, across all three processes.
  const doubleRuns = () => {
    const runs = new Map<string, number>();
    for (const tag of readFileSync(marks, 'utf8').split('\n').filter(Boolean)) runs.set(tag, (runs.get(tag) ?? 0) + 1);
    return [...runs].filter(([, count]) => count > 1).map(([tag]) => tag);
  };
  expect(doubleRuns()).toEqual([]);
  for (const outcome of outcomes) {
    const code = outcome.answer.body.error?.code;
    expect(outcome.answer.body.success === true || code === 'outcome_unknown', `${outcome.tag}: ${JSON.stringify(outcome.answer.body)}`).toBe(true);
  }

  // Successes answered before the kill replay the same result after it (or, for one whose record the
  // replicas had not acknowledged when the primary died, say outcome_unknown: never a second run).
  const early = outcomes.filter((o) => o.answeredAt < killedAt && o.answer.body.success === true);
  let unknownAfter = 0;
  for (const [i, outcome] of early.entries()) {
    const again = (await untilAnswered(ports, outcome.tag, i, (at) => (last503 = Math.max(last503, at)))).answer;
    if (again.body.error?.code === 'outcome_unknown' && outcome.answeredAt > killedAt - 1000) {
      unknownAfter++;
      continue;
    }
    expect(again.body, outcome.tag).toMatchObject({ success: true, replayed: true, value: { run: outcome.answer.body.value.run } });
  }
  expect(unknownAfter).toBeLessThanOrEqual(LOAD_WORKERS);
  for (const [i, session] of sessions.entries()) {
    const plan = await read(ports[(i + 1) % 3]!, `/sessions/${session}/plan`);
    expect(plan.body.objective, session).toBe(`keep ${session}`);
  }
  expect(doubleRuns()).toEqual([]); // the replays ran nothing
  // Back: every replica answered a fresh call, and no call was answered 503 any more (the replays included).
  const recoverMs = Math.max(backAt, last503) - promotedAt;
  expect(recoverMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);

  const counts = {
    calls: outcomes.length,
    answeredBeforeKill: before,
    answered: outcomes.filter((o) => o.answer.status === 200).length,
    replays: outcomes.filter((o) => o.answer.body.replayed === true).length,
    unknowns: outcomes.filter((o) => o.answer.body.error?.code === 'outcome_unknown').length,
    retried: outcomes.filter((o) => o.attempts > 1).length,
    unknownOnReplay: unknownAfter,
    doubleRuns: doubleRuns().length,
    promotionAfterKillMs: promotedAt - killedAt,
    recoverMs,
  };
  console.log(`chaos on ${topology.label}: ${JSON.stringify(counts)}`);
  await Promise.all(replicas.map(({ child }) => new Promise((resolve) => (child.proc.once('exit', resolve), child.proc.kill('SIGTERM')))));
  return counts;
}

describe('the store fails over under load', () => {
  afterAll(() => stopAll());

  describe('on Sentinel', () => {
    let sentinel: RedisSentinel;
    beforeAll(async () => {
      sentinel = await RedisSentinel.start();
    }, 60_000);
    afterAll(() => sentinel?.stop());

    it('answers store_not_durable and runs nothing while the replicas do not acknowledge', async () => {
      const marks = path.join(mkdtempSync(path.join(tmpdir(), 'chaos-')), 'runs');
      writeFileSync(marks, '');
      const env = { REDIS_URL: '', REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name, REDIS_ACK_TIMEOUT_MS: '200' };
      const { child, port } = await startReplica('toolport not durable', { ...env, TOOL_PLUGINS: 'test/fixtures/chaos-plugin.ts', CHAOS_TEST_MARKS: marks });
      try {
        expect((await call(port, { name: 'chaos_charge', arguments: { tag: `ok-${randomUUID()}` } })).body).toMatchObject({ success: true });
        await sentinel.pauseReplicas(true);
        const tag = `paused-${randomUUID()}`;
        const refused = await call(port, { name: 'chaos_charge', arguments: { tag } });
        expect(refused.status).toBe(503);
        expect(refused.body.type).toBe('urn:toolport:problem:store-not-durable');
        expect(readFileSync(marks, 'utf8')).not.toContain(tag);
        await sentinel.pauseReplicas(false);
        let answer: Answer = refused;
        for (let i = 0; i < 50 && answer.status !== 200; i++) {
          await sleep(100);
          answer = await call(port, { name: 'chaos_charge', arguments: { tag } });
        }
        expect(answer.body).toMatchObject({ success: true, replayed: false });
        expect(
          readFileSync(marks, 'utf8')
            .split('\n')
            .filter((line) => line === tag),
        ).toHaveLength(1);
      } finally {
        await sentinel.pauseReplicas(false);
        child.proc.kill('SIGTERM');
      }
    }, 120_000);
    it('runs no effect twice when the primary is killed mid-load, and serves again within 10 s of the promotion', async () => {
      await chaos({
        label: 'sentinel',
        env: { REDIS_SENTINELS: sentinel.sentinels, REDIS_SENTINEL_NAME: sentinel.name },
        fail: async () => sentinel.waitForPromotion(await sentinel.killPrimary()),
      });
    }, 180_000);

    it('after a graceful failover (the old primary demoted, answering READONLY) writes fail over as 503s and come back', async () => {
      const sentinels = sentinel.sentinels.split(',').map((entry) => ({ host: '127.0.0.1', port: Number(entry.split(':')[1]) }));
      const store = new RedisStore(
        { sentinels, sentinelName: sentinel.name },
        { keyPrefix: `graceful-${randomUUID().slice(0, 8)}:`, sessionTtlS: 60, sessionMaxEvents: 10 },
        pino({ level: 'silent' }),
      );
      try {
        expect(await store.waitUntilReady(5000)).toBe(true);
        const write = (i: number) => store.commitSession('s', { reads: new Map(), writes: new Map([['n', String(i)]]), event: '{}' });
        expect(await write(0)).toBe(true);
        const old = await sentinel.failover();
        const promoted = sentinel.waitForPromotion(old);
        const errors: unknown[] = [];
        let backAt = 0;
        for (let i = 1; backAt === 0 && i < 1000; i++) {
          try {
            await write(i);
            if (errors.length > 0 || (await Promise.race([promoted.then(() => true), sleep(0).then(() => false)]))) backAt = Date.now();
          } catch (err) {
            errors.push(err);
          }
          await sleep(20);
        }
        const promotedAt = await promoted;
        expect(backAt - promotedAt).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
        for (const err of errors) {
          expect(err).toBeInstanceOf(StoreUnavailable);
          expect((err as Error).message).not.toMatch(/READONLY/);
        }
        expect(await write(9999)).toBe(true);
      } finally {
        await store.close();
      }
    }, 60_000);
  });

  describe('on Redis Cluster', () => {
    let cluster: RedisCluster;
    beforeAll(async () => {
      cluster = await RedisCluster.start(3, 1, 1000);
    }, 60_000);
    afterAll(() => cluster?.stop());

    it('runs no effect twice when a master is killed mid-load, and serves again within 10 s of the failover', async () => {
      await chaos({
        label: 'cluster',
        env: { REDIS_CLUSTER_NODES: cluster.nodes },
        // The ledger entries spread over every master: killing one fails over a third of the keys.
        fail: async () => cluster.waitForFailover(await cluster.killMasterOf('any-key')),
      });
    }, 180_000);
  });
});
