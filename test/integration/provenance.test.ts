/** Tool provenance: every served definition kept by hash, versions per name, across restarts on Redis. */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { hashJson } from '../../src/tools/hash.ts';
import { ok } from '../../src/tools/define.ts';
import type { SourceRegistry } from '../../src/tools/registry.ts';
import { RedisServer } from '../../support/redis-server.ts';
import { makeApp, STORES } from '../helpers/app.ts';

/** A forecast tool whose schema changes between "releases". */
function forecastTool(release: 1 | 2) {
  return (registry: SourceRegistry) =>
    registry.registerTool({
      name: 'forecast',
      description: 'Forecast the weather.',
      parameters: {
        type: 'object',
        properties: release === 1 ? { city: { type: 'string' } } : { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } },
        required: ['city'],
      },
      handler: () => ok(null, 'sunny'),
    });
}

describe.each(STORES)('provenance (%s store)', (store) => {
  let app: FastifyInstance;
  const get = (url: string) => app.inject({ method: 'GET', url });
  beforeAll(async () => {
    app = await makeApp(store, { register: forecastTool(1) });
  });
  afterAll(() => app.close());

  it('resolves the hash a result names to the exact definition it covers', async () => {
    const result = (await app.inject({ method: 'POST', url: '/tools/invoke', payload: { name: 'forecast', arguments: { city: 'Oslo' } } })).json();
    const kept = await get(`/tools/hashes/${result.tool_hash}`);
    expect(kept.statusCode).toBe(200);
    const body = kept.json();
    expect(body.definition).toEqual({
      name: 'forecast',
      description: 'Forecast the weather.',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
    });
    expect(hashJson(body.definition)).toBe(result.tool_hash);
    expect(Date.parse(body.first_served_at)).toBeLessThanOrEqual(Date.now());
  });

  it('lists the versions of a tool, and 404s for an unknown hash or name', async () => {
    const versions = (await get('/tools/forecast/versions')).json();
    expect(versions).toEqual({ name: 'forecast', versions: [{ hash: (await get('/tools/forecast')).json().hash, first_served_at: expect.any(String) }] });
    for (const url of [`/tools/hashes/${'0'.repeat(64)}`, '/tools/hashes/not-a-hash', '/tools/nope/versions']) {
      const response = await get(url);
      expect(response.statusCode).toBe(404);
      expect(response.headers['content-type']).toMatch(/problem\+json/);
    }
  });
});

describe('provenance across a restart (redis store)', () => {
  it('lists a changed schema as a new version after a restart, and the old hash still resolves', async () => {
    const env = { KEY_PREFIX: `test:${randomUUID().slice(0, 8)}:` };
    const first = await makeApp('redis', { env, register: forecastTool(1) });
    const oldHash = (await first.inject({ method: 'GET', url: '/tools/forecast' })).json().hash;
    const oldVersions = (await first.inject({ method: 'GET', url: '/tools/forecast/versions' })).json().versions;
    await first.close();

    const again = await makeApp('redis', { env, register: forecastTool(1) });
    expect((await again.inject({ method: 'GET', url: '/tools/forecast/versions' })).json().versions).toEqual(oldVersions);
    await again.close();

    const second = await makeApp('redis', { env, register: forecastTool(2) });
    try {
      const newHash = (await second.inject({ method: 'GET', url: '/tools/forecast' })).json().hash;
      expect(newHash).not.toBe(oldHash);
      const versions = (await second.inject({ method: 'GET', url: '/tools/forecast/versions' })).json().versions;
      expect(versions.map((v: { hash: string }) => v.hash)).toEqual([oldHash, newHash]);
      expect(versions[0]).toEqual(oldVersions[0]);
      expect(Date.parse(versions[1].first_served_at)).toBeGreaterThanOrEqual(Date.parse(versions[0].first_served_at));
      const old = (await second.inject({ method: 'GET', url: `/tools/hashes/${oldHash}` })).json();
      expect(old.definition.parameters.properties).toEqual({ city: { type: 'string' } });
      const current = (await second.inject({ method: 'GET', url: `/tools/hashes/${newHash}` })).json();
      expect(current.definition.parameters.properties.days).toEqual({ type: 'integer', minimum: 1 });
      // Provenance never expires, and all of it shares one hash tag (one script keeps a whole catalog).
      const redis = new Redis(inject('redisUrl'));
      try {
        const keys = await redis.keys(`${env.KEY_PREFIX}*`);
        expect(keys.length).toBeGreaterThan(2);
        for (const key of keys) {
          expect(key.startsWith(`${env.KEY_PREFIX}{tooldefs}:`)).toBe(true);
          expect(await redis.pttl(key)).toBe(-1);
        }
      } finally {
        redis.disconnect();
      }
    } finally {
      await second.close();
    }
  });
});

describe('provenance while Redis is down at start', () => {
  it('serves no definition before it is kept (503), then records and serves once Redis is back', async () => {
    const redis = await RedisServer.start();
    await redis.stop();
    const app = await makeApp('redis', { redisUrl: redis.url, register: forecastTool(1) });
    try {
      const down = await app.inject({ method: 'GET', url: '/tools?format=openai' });
      expect(down.statusCode).toBe(503);
      expect(down.headers['content-type']).toMatch(/problem\+json/);
      await redis.restart();
      let listed = down;
      for (let i = 0; i < 80 && listed.statusCode !== 200; i++) {
        await sleep(100);
        listed = await app.inject({ method: 'GET', url: '/tools?format=openai' });
      }
      expect(listed.statusCode).toBe(200);
      const versions = (await app.inject({ method: 'GET', url: '/tools/forecast/versions' })).json().versions;
      expect(versions).toHaveLength(1);
    } finally {
      await app.close();
      await redis.stop();
    }
  });
});

describe('provenance routes beside /tools/{name}', () => {
  it('keeps a tool named "hashes" reachable: its definition and its versions', async () => {
    const app = await makeApp('memory', {
      register: (registry) =>
        registry.registerTool({ name: 'hashes', description: 'Hash things.', parameters: { type: 'object', properties: {} }, handler: () => ok(null, 'done') }),
    });
    try {
      const tool = await app.inject({ method: 'GET', url: '/tools/hashes' });
      expect(tool.statusCode).toBe(200);
      expect(tool.json().name).toBe('hashes');
      const versions = await app.inject({ method: 'GET', url: '/tools/hashes/versions' });
      expect(versions.json()).toEqual({ name: 'hashes', versions: [{ hash: tool.json().hash, first_served_at: expect.any(String) }] });
    } finally {
      await app.close();
    }
  });
});
