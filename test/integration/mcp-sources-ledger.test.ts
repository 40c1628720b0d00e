/**
 * The effect ledger in front of an MCP server (docs/ledger.md, docs/mcp-sources.md): two replicas on one Redis, each
 * running its own server-memory process over one knowledge-graph file. An entity created twice at
 * once, through both replicas, is created once: the other call waits and replays the first result
 * (a second run would have answered an empty list: server-memory skips entities it already has).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from '../helpers/app.ts';
import { makeMcpApp, MEMORY, stdioServer } from '../helpers/mcp-upstreams.ts';

describe('an upstream side effect across two replicas (redis)', () => {
  const graph = path.join(mkdtempSync(path.join(tmpdir(), 'toolport-memory-')), 'graph.jsonl');
  const prefix = `mcp-ledger-${randomUUID().slice(0, 8)}:`;
  let apps: FastifyInstance[] = [];
  beforeAll(async () => {
    const source = stdioServer('memory', MEMORY, {
      env: { MEMORY_FILE_PATH: graph },
      tools: { create_entities: { idempotency: { strategy: 'auto', scope: 'global' } } },
    });
    apps = await Promise.all([0, 1].map(() => makeMcpApp('redis', [source], { env: { KEY_PREFIX: prefix } })));
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('runs once; the other replica replays the recorded result', async () => {
    const entity = { name: `Ada-${randomUUID().slice(0, 8)}`, entityType: 'person', observations: ['wrote the first program'] };
    const call = { name: 'memory_create_entities', arguments: { entities: [entity] } };
    const [a, b] = await Promise.all(apps.map((app) => post(app, call)));
    for (const answer of [a!, b!]) expect(answer.body).toMatchObject({ success: true, value: { entities: [entity] } });
    expect([a!.body.replayed, b!.body.replayed].sort()).toEqual([false, true]);
    expect(a!.body.effect_id).toBe(b!.body.effect_id);
    const lines = readFileSync(graph, 'utf8')
      .split('\n')
      .filter((l) => l.includes(entity.name));
    expect(lines).toHaveLength(1);
    const read = await post(apps[1]!, { name: 'memory_open_nodes', arguments: { names: [entity.name] } });
    expect(read.body.value.entities).toEqual([entity]);
  });
});
