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

  it('lists only the fields asked for, with their own ETag, and refuses unknown fields or another format', async () => {
    const full = (await app.inject({ method: 'GET', url: '/tools' })).json();
    const response = await app.inject({ method: 'GET', url: '/tools?fields=name,description,source' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.hash).toBe(full.hash);
    expect(body.tools).toHaveLength(full.tools.length);
    expect(body.tools.find((t: { name: string }) => t.name === 'echo')).toEqual({
      name: 'echo',
      description: 'Echo the text back.',
      source: 'app options',
    });
    expect(response.headers.etag).not.toBe(`"${full.hash}"`);
    const again = await app.inject({
      method: 'GET',
      url: '/tools?fields=name,description,source',
      headers: { 'if-none-match': String(response.headers.etag) },
    });
    expect(again.statusCode).toBe(304);
    const unknown = await app.inject({ method: 'GET', url: '/tools?fields=name,secret' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().detail).toContain('no field "secret"');
    expect((await app.inject({ method: 'GET', url: '/tools?fields=name&format=openai' })).statusCode).toBe(400);
  });

  it('compresses a large listing for a client that accepts it, and never a tool call', async () => {
    const listing = await app.inject({ method: 'GET', url: '/tools', headers: { 'accept-encoding': 'br, gzip' } });
    expect(listing.headers['content-encoding']).toBe('br');
    const plain = await app.inject({ method: 'GET', url: '/tools' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(listing.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
    const call = await app.inject({
      method: 'POST',
      url: '/tools/invoke',
      headers: { 'accept-encoding': 'br, gzip' },
      payload: { name: 'echo', arguments: { text: 'x'.repeat(4000) } },
    });
    expect(call.statusCode).toBe(200);
    expect(call.headers['content-encoding']).toBeUndefined();
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
