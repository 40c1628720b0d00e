/** A known path called with another method: 405 with Allow, as a problem, before auth or body parsing. */
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp } from '../helpers/app.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'QUERY'] as const;

describe('methods', () => {
  let app: FastifyInstance;
  beforeAll(async () => {
    app = await makeApp('memory');
  });
  afterAll(() => app.close());

  it('answers every other method of every documented path with 405 and an Allow naming the documented ones', async () => {
    const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const paths = Object.entries(document.paths);
    expect(paths.length).toBeGreaterThan(15);
    for (const [template, operations] of paths) {
      const path = template.replace(/\{[^}]+\}/g, 'x1');
      const documented = Object.keys(operations).map((m) => m.toUpperCase());
      for (const method of METHODS.filter((m) => !documented.includes(m))) {
        const response = await app.inject({ method: method as 'GET', url: path });
        // GET /tools/invoke is a real route (/tools/{name}), and /mcp answers its own 405.
        if (response.statusCode !== 405) {
          expect(response.body, `${method} ${path}`).not.toContain('no route');
          continue;
        }
        const allow = String(response.headers.allow).split(', ');
        expect(allow, `${method} ${path}`).toEqual(expect.arrayContaining(documented));
        expect(allow).not.toContain(method);
      }
    }
  });

  it('answers a problem, never a text of Fastify, whatever the method, content type or body', async () => {
    for (const [method, headers, payload] of [
      ['QUERY', {}, undefined],
      ['QUERY', { 'content-type': 'text/plain' }, 'x'],
      ['PUT', { 'content-type': 'application/xml' }, '<a/>'],
      ['PATCH', { 'content-type': 'application/json' }, '{'],
    ] as const) {
      const response = await app.inject({ method: method as 'GET', url: '/tools', headers, ...(payload !== undefined && { payload }) });
      expect(response.statusCode).toBe(405);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.headers.allow).toBe('GET, HEAD');
      expect(response.json()).toMatchObject({ type: 'urn:toolport:problem:method-not-allowed', status: 405 });
      expect(response.body).not.toMatch(/must provide|Content-Type' header/);
    }
    const unknown = await app.inject({ method: 'QUERY' as 'GET', url: '/no/such/path' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toMatchObject({ type: 'urn:toolport:problem:not-found' });
  });
});
