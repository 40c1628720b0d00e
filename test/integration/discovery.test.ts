/** GET /tools and GET /tools/{name}: native definitions, catalog hash as ETag, 304 on If-None-Match. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, STORES } from '../helpers/app.ts';
import { testTools } from '../helpers/tools.ts';

describe.each(STORES)('discovery (%s store)', (store) => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp(store);
  });
  afterAll(() => app.close());

  it('lists every tool with hash, examples, idempotency and annotations, and the catalog hash as ETag', async () => {
    const response = await app.inject({ method: 'GET', url: '/tools' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    const builtIn = [
      'planning_setup_plan',
      'planning_add_step',
      'planning_update_step',
      'planning_read_plan',
      'introspect_catalog',
      'introspect_session',
      'result_read',
      'tool_search',
      'tool_invoke',
    ];
    expect(body.tools.map((t: { name: string }) => t.name)).toEqual([...builtIn, ...testTools.map((t) => t.name)]);
    expect(response.headers.etag).toBe(`"${body.hash}"`);
    const echo = body.tools.find((t: { name: string }) => t.name === 'echo');
    expect(echo).toMatchObject({ description: 'Echo the text back.', examples: [], idempotency: null, annotations: null });
    expect(echo.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(echo.parameters.additionalProperties).toBe(false);
  });

  it('answers 304 to If-None-Match with the current ETag, weak or in a list', async () => {
    const first = await app.inject({ method: 'GET', url: '/tools' });
    const etag = String(first.headers.etag);
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await app.inject({ method: 'GET', url: '/tools', headers: { 'if-none-match': header } });
      expect(again.statusCode).toBe(304);
      expect(again.body).toBe('');
    }
    const stale = await app.inject({ method: 'GET', url: '/tools', headers: { 'if-none-match': '"stale"' } });
    expect(stale.statusCode).toBe(200);
  });

  it('serves one tool with its hash as ETag, and 404 for an unknown one', async () => {
    const list = (await app.inject({ method: 'GET', url: '/tools' })).json();
    const one = await app.inject({ method: 'GET', url: '/tools/echo' });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toEqual(list.tools.find((t: { name: string }) => t.name === 'echo'));
    expect(one.headers.etag).toBe(`"${one.json().hash}"`);
    const missing = await app.inject({ method: 'GET', url: '/tools/missing' });
    expect(missing.statusCode).toBe(404);
    expect(missing.headers['content-type']).toMatch(/problem\+json/);
  });

  it('names the tool hash that ran in each result, matching discovery', async () => {
    const listed = (await app.inject({ method: 'GET', url: '/tools/echo' })).json();
    const result = await app.inject({ method: 'POST', url: '/tools/invoke', payload: { name: 'echo', arguments: { text: 'a' } } });
    expect(result.json().tool_hash).toBe(listed.hash);
  });

  it('answers 400 for an unknown format', async () => {
    const response = await app.inject({ method: 'GET', url: '/tools?format=cobol' });
    expect(response.statusCode).toBe(400);
  });

  it('reports liveness and readiness', async () => {
    expect((await app.inject({ method: 'GET', url: '/healthz' })).json()).toEqual({ status: 'ok' });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready', store });
  });
});
