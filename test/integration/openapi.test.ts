/** The OpenAPI document: generated from the route schemas, committed, and kept in sync. */
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { OPENAPI_PATH, renderOpenApi } from '../../scripts/openapi.ts';
import { makeApp } from '../helpers/app.ts';

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
        expect.arrayContaining(['/tools/invoke', '/tools/planning_read_plan/invoke', '/tools', '/tools/{name}', '/healthz', '/readyz', '/mcp']),
      );
      expect(document.paths['/tools/invoke'].post.operationId).toBe('invokeToolCall');
      const docs = await app.inject({ method: 'GET', url: '/docs/' });
      expect(docs.statusCode).toBe(200);
      expect(docs.headers['content-type']).toMatch(/text\/html/);
    } finally {
      await app.close();
    }
  });

  it('has one POST /tools/{tool}/invoke operation per tool, named after it, typed by its schemas', async () => {
    const app = await makeApp('memory');
    try {
      const document = (await app.inject({ method: 'GET', url: '/openapi.json' })).json();
      const tools = app.toolport.registry.list();
      expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['planning_setup_plan', 'echo', 'steps'])); // built-ins and loaded plugins
      for (const tool of tools) {
        const operation = document.paths[`/tools/${tool.name}/invoke`]?.post;
        expect(operation, tool.name).toBeDefined();
        expect(operation.operationId).toBe(tool.name);
        expect(operation.description).toBe(tool.description);
        expect(operation.requestBody.content['application/json'].schema).toEqual(tool.parameters);
        const answer = operation.responses['200'].content['application/json'].schema;
        if (tool.result !== null) expect(answer.then.properties.value.anyOf).toEqual([tool.result, { type: 'null' }]);
        expect(operation.parameters.map((p: { name: string }) => p.name)).toEqual(['x-session-id', 'idempotency-key', 'x-timeout-ms', 'prefer']);
      }
      expect(document.paths['/tools/{name}/invoke']).toBeUndefined();
      const operationIds = Object.values(document.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
      expect(new Set(operationIds).size).toBe(operationIds.length);
      // What a gateway does with the document: POST the operation's path with a body of its schema.
      const called = await app.inject({
        method: 'POST',
        url: '/tools/steps/invoke',
        headers: { 'content-type': 'application/json' },
        payload: { n: 1, ms: 0 },
      });
      expect(called.json()).toMatchObject({ name: 'steps', success: true, value: { steps: 1 } });
    } finally {
      await app.close();
    }
  });
});
