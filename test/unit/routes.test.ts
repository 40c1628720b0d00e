import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app/index.ts';
import { ROUTES } from '../../src/app/routes.ts';
import { loadConfig } from '../../src/config.ts';

/** Every `METHOD /path` the app serves, read from Fastify's own route tree (HEAD left out: Fastify adds it to each GET). */
function servedRoutes(app: FastifyInstance): string[] {
  const served: string[] = [];
  const parents: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const branch = line.search(/[├└]── /);
    if (branch < 0) continue;
    const depth = branch / 4;
    const node = /^(.*?)(?: \(([A-Z, ]+)\))?$/.exec(line.slice(branch + 4))!;
    const path = (parents[depth - 1] ?? '') + node[1];
    parents[depth] = path;
    parents.length = depth + 1;
    for (const method of node[2]?.split(', ') ?? []) if (method !== 'HEAD') served.push(`${method} ${path}`);
  }
  return served.sort();
}

const listed = (without: readonly (keyof typeof ROUTES)[] = []): string[] =>
  Object.entries(ROUTES)
    .filter(([module]) => !without.includes(module as keyof typeof ROUTES))
    .flatMap(([, routes]) => routes)
    .sort();

describe('src/app/routes.ts, the list of routes', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('lists every route the app serves, and serves every route it lists', async () => {
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }));
    await app.ready();
    const served = servedRoutes(app);
    expect(served.length).toBeGreaterThan(40);
    expect(served).toEqual(listed(['resourceMetadataRoutes']));
  });

  it('lists the routes that only a service with an OAuth issuer serves', async () => {
    app = await buildApp(loadConfig({ LOG_LEVEL: 'silent', AUTH_ISSUER: 'https://issuer.example', PUBLIC_URL: 'https://toolport.example' }));
    await app.ready();
    expect(servedRoutes(app)).toEqual(listed());
  });

  it('names each route once', () => {
    const all = listed();
    expect(new Set(all).size).toBe(all.length);
  });
});
