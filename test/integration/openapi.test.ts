/** The OpenAPI document: generated from the route schemas, committed, and kept in sync. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { OPENAPI_PATH, renderOpenApi } from '../../scripts/openapi.ts';

describe('OpenAPI document', () => {
  it('committed at openapi/openapi.json matches what the code generates (run `npm run openapi` after a route change)', async () => {
    const committed = await readFile(OPENAPI_PATH, 'utf8');
    expect(committed).toBe(await renderOpenApi());
  });

  it('is served at /openapi.json and Swagger UI at /docs', async () => {
    const app = await buildApp(loadConfig({ LOG_LEVEL: 'silent' }));
    try {
      const served = await app.inject({ method: 'GET', url: '/openapi.json' });
      expect(served.statusCode).toBe(200);
      const document = served.json();
      expect(document.openapi).toBe('3.1.0');
      expect(Object.keys(document.paths)).toEqual(
        expect.arrayContaining(['/tools/invoke', '/tools/{name}/invoke', '/tools', '/tools/{name}', '/healthz', '/readyz']),
      );
      expect(document.paths['/tools/invoke'].post.operationId).toBe('invokeToolCall');
      const docs = await app.inject({ method: 'GET', url: '/docs/' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toMatch(/text\/html/);
    } finally {
      await app.close();
    }
  });
});
