/**
 * toolport on a three-master Redis Cluster (REDIS_CLUSTER_NODES): every script's keys share a hash
 * tag, so sessions, plans, events and provenance work wherever their slot lives.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisCluster } from '../../support/redis-cluster.ts';
import { get, makeApp, post, sessionEvents } from '../helpers/app.ts';

describe('on a Redis Cluster', () => {
  let cluster: RedisCluster;
  const replicas: FastifyInstance[] = [];
  beforeAll(async () => {
    cluster = await RedisCluster.start(3);
    const env = { REDIS_CLUSTER_NODES: cluster.nodes, KEY_PREFIX: `cl-${randomUUID().slice(0, 8)}:` };
    replicas.push(await makeApp('memory', { env }), await makeApp('memory', { env }));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(replicas.map((app) => app.close()));
    await cluster?.stop();
  });

  it('serves /readyz from the cluster', async () => {
    expect((await get(replicas[0]!, '/readyz')).body).toEqual({ status: 'ready', store: 'redis' });
  });

  it('keeps plans lossless under concurrent updates from two replicas, in sessions spread over the masters', async () => {
    const sessions = Array.from({ length: 6 }, () => `cluster-${randomUUID()}`);
    const prefix = replicas[0]!.toolport.config.keyPrefix;
    const nodes = new Set(await Promise.all(sessions.map((id) => cluster.nodeOf(`${prefix}{session:${id}}:state`))));
    expect(nodes.size).toBeGreaterThan(1);
    await Promise.all(
      sessions.map(async (id) => {
        const headers = { 'x-session-id': id };
        await post(replicas[0]!, { name: 'planning_setup_plan', arguments: { objective: 'spread' } }, headers);
        await Promise.all(Array.from({ length: 16 }, (_, i) => post(replicas[i % 2]!, { name: 'planning_add_step', arguments: { steps: [`s${i}`] } }, headers)));
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
});
