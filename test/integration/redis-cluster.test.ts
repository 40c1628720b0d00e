/**
 * toolport on a three-master Redis Cluster (REDIS_CLUSTER_NODES): every script's keys share a hash
 * tag, so sessions, plans, events and provenance work wherever their slot lives.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCluster } from '../../support/redis-cluster.ts';
import { get, makeApp, post, sessionEvents } from '../helpers/app.ts';
import { registerLedgerTools, runsOf } from '../helpers/ledger-tools.ts';

describe('on a Redis Cluster', () => {
  let cluster: RedisCluster;
  const replicas: FastifyInstance[] = [];
  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    const env = { REDIS_CLUSTER_NODES: cluster.nodes, KEY_PREFIX: `cl-${randomUUID().slice(0, 8)}:` };
    // 'memory' only means "no REDIS_URL": REDIS_CLUSTER_NODES selects the cluster store.
    replicas.push(await makeApp('memory', { env, register: registerLedgerTools }), await makeApp('memory', { env, register: registerLedgerTools }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((app) => app.close()));
    await cluster?.stop();
  });

  it('serves /readyz from the cluster', async () => {
    expect((await get(replicas[0]!, '/readyz')).body).toEqual({ status: 'ready', store: 'redis' });
  });

  it('keeps plans lossless under concurrent updates from two replicas, in sessions spread over the masters', async () => {
    // Six sessions, picked so that they live on more than one master.
    const prefix = replicas[0]!.toolport.config.keyPrefix;
    const sessions: string[] = [];
    const nodes = new Set<number>();
    while (sessions.length < 6 || nodes.size < 2) {
      const id = `cluster-${randomUUID()}`;
      nodes.add(await cluster.nodeOf(`${prefix}{session:${id}}:state`));
      sessions.push(id);
    }
    await Promise.all(
      sessions.map(async (id) => {
        const headers = { 'x-session-id': id };
        await post(replicas[0]!, { name: 'planning_setup_plan', arguments: { objective: 'spread' } }, headers);
        await Promise.all(
          Array.from({ length: 16 }, (_, i) => post(replicas[i % 2]!, { name: 'planning_add_step', arguments: { steps: [`s${i}`] } }, headers)),
        );
        const plan = (await get(replicas[1]!, `/sessions/${id}/plan`)).body;
        expect(plan.steps.map((s: { step_id: number }) => s.step_id)).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
        expect((await sessionEvents(replicas[0]!, id)).length).toBe(17);
      }),
    );
  });

  it('keeps tool provenance and removes sessions', async () => {
    const listed = (await get(replicas[0]!, '/tools')).body;
    const echo = listed.tools.find((t: { name: string }) => t.name === 'echo');
    expect((await get(replicas[1]!, `/tools/hashes/${echo.hash}`)).status).toBe(200);
    expect((await get(replicas[1]!, '/tools/echo/versions')).body.versions.map((v: { hash: string }) => v.hash)).toEqual([echo.hash]);
    const id = `gone-${randomUUID()}`;
    await post(replicas[0]!, { name: 'planning_setup_plan', arguments: { objective: 'o' } }, { 'x-session-id': id });
    expect((await replicas[1]!.inject({ method: 'DELETE', url: `/sessions/${id}` })).statusCode).toBe(204);
    expect((await get(replicas[0]!, `/sessions/${id}/plan`)).status).toBe(404);
  });

  it('runs an idempotent call once for each of 4 bursts of 10 concurrent identical calls across replicas', async () => {
    const tags = Array.from({ length: 4 }, () => `cl-${randomUUID()}`);
    await Promise.all(
      tags.map(async (tag) => {
        const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post(replicas[i % 2]!, { name: 'charge_global', arguments: { tag, ms: 100 } })));
        expect(runsOf(tag)).toBe(1);
        expect(new Set(results.map((r) => r.body.value.charge_id)).size).toBe(1);
        expect(results.filter((r) => r.body.replayed)).toHaveLength(9);
      }),
    );
    const first = (await post(replicas[0]!, { name: 'charge_global', arguments: { tag: tags[0] } })).body;
    const key = first.idempotency_key as string;
    expect((await get(replicas[1]!, `/ledger/effects/${encodeURIComponent(key)}`)).body.effect_id).toBe(first.effect_id);
    expect((await replicas[1]!.inject({ method: 'DELETE', url: '/ledger/tools/charge_global' })).statusCode).toBe(200);
    expect((await post(replicas[0]!, { name: 'charge_global', arguments: { tag: tags[0] } })).body.replayed).toBe(false);
  });
  it('runs tasks on one replica while the other answers for them and cancels them (signals cross the cluster)', async () => {
    const async = { prefer: 'respond-async' };
    const done = await post(replicas[0]!, { name: 'echo', arguments: { text: 'clustered' } }, async);
    expect((await get(replicas[1]!, `/tasks/${done.body.task_id}?wait_ms=30000`)).body).toMatchObject({
      status: 'completed',
      result: { value: { text: 'clustered' } },
    });
    const hanging = await post(replicas[0]!, { name: 'hang', arguments: {} }, async);
    expect((await replicas[1]!.inject({ method: 'DELETE', url: `/tasks/${hanging.body.task_id}` })).statusCode).toBe(200);
    expect((await get(replicas[1]!, `/tasks/${hanging.body.task_id}?wait_ms=30000`)).body.status).toBe('cancelled');
    expect((await get(replicas[1]!, '/tasks?limit=2')).body.tasks.map((t: { task_id: string }) => t.task_id)).toEqual([
      hanging.body.task_id,
      done.body.task_id,
    ]);
  });

  it('keeps one audit chain for both replicas, which `toolport audit verify` accepts', async () => {
    for (let i = 0; i < 20; i++) await post(replicas[i % 2]!, { name: 'echo', arguments: { text: `audit ${i}` } });
    await new Promise((resolve) => setTimeout(resolve, 150)); // each replica writes its batch within 50 ms
    const page = (await get(replicas[1]!, '/audit?kind=call&tool=echo&limit=500')).body;
    expect(page.entries.length).toBeGreaterThanOrEqual(20);
    const { config } = replicas[0]!.toolport;
    const checked = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['bin/toolport.js', 'audit', 'verify'],
        {
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', REDIS_CLUSTER_NODES: cluster.nodes, KEY_PREFIX: config.keyPrefix },
          timeout: 60_000,
        },
        (err, stdout) => resolve({ code: err === null ? 0 : Number(err.code), stdout }),
      );
    });
    expect(checked.stdout).toMatch(/^audit chain verified \(redis\): \d+ entries, entries 1 to \d+\n$/);
    expect(checked.code).toBe(0);
  }, 60_000);
});
