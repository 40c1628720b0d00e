/** OpenAPI operations as tools: 3.0 and 3.1 schemas made strict-JSON-Schema, names, descriptions, request building. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolSources } from '../../src/sources/index.ts';
import { buildRequest, encodePathValue } from '../../src/sources/openapi/request.ts';
import { operationsOf } from '../../src/sources/openapi/operations.ts';
import { toJsonSchema } from '../../src/sources/openapi/schema.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { loadConfig } from '../../src/config.ts';
import { createStore } from '../../src/store/index.ts';
import { Provenance } from '../../src/tools/provenance.ts';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-openapi-unit-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const LONG_ID = `list${'Everything'.repeat(8)}`;
const document31 = {
  openapi: '3.1.0',
  info: { title: 'Tree service', version: '1' },
  servers: [{ url: 'https://{region}.trees.example/api', variables: { region: { default: 'eu' } } }],
  paths: {
    '/trees/{treeId}/nodes': {
      parameters: [{ name: 'treeId', in: 'path', required: true, schema: { type: 'string' } }],
      get: {
        summary: 'The nodes of a tree',
        parameters: [
          { name: 'depth', in: 'query', schema: { type: ['integer', 'null'], minimum: 0 } },
          { name: 'X-Trace-Tag', in: 'header', schema: { type: 'string' } },
          { name: 'session', in: 'cookie', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } } },
      },
    },
    '/things': {
      post: {
        operationId: LONG_ID,
        description: `${'A very long description. '.repeat(12)}`,
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } } },
        },
        responses: { '201': { description: 'made' } },
      },
    },
    '/upload': {
      put: {
        operationId: 'upload',
        requestBody: { required: true, content: { 'application/octet-stream': { schema: { type: 'string' } } } },
        responses: { '204': { description: 'ok' } },
      },
    },
  },
  components: {
    schemas: {
      Node: {
        type: 'object',
        properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/components/schemas/Node' } } },
        'x-internal': true,
      },
    },
  },
};

describe('OpenAPI 3.1 document', () => {
  it('registers an operation per route, named from operationId or method and path, with recursive schemas accepted', async () => {
    await writeFile(join(folder, 'trees.json'), JSON.stringify(document31));
    await writeFile(join(folder, 'tools.yaml'), 'openapi:\n  - {source: trees, spec: ./trees.json}\n');
    const registry = new ToolRegistry();
    const log = pino({ level: 'silent' });
    const store = await createStore(loadConfig({ LOG_LEVEL: 'silent' }), log);
    const sources = await loadToolSources({
      registry,
      file: join(folder, 'tools.yaml'),
      log,
      store,
      provenance: new Provenance(store, registry, log),
      version: 'test',
    });
    await sources.close();
    await store.close();
    const names = registry.list().map((t) => t.name);
    expect(names).toHaveLength(2); // the octet-stream upload is not offered
    expect(names[0]).toBe('trees_get_trees_treeid_nodes');
    expect(names[1]).toHaveLength(64);
    expect(names[1]).toMatch(/^trees_listeverything.*_[0-9a-f]{8}$/);
    const nodes = registry.get('trees_get_trees_treeid_nodes')!;
    expect(nodes.description).toBe('The nodes of a tree');
    expect(Object.keys(nodes.parameters.properties as object)).toEqual(['treeId', 'depth', 'X-Trace-Tag']);
    expect(nodes.validateParams({ treeId: 'oak', depth: null })).toBe(true);
    expect(nodes.validateParams({ depth: 1 })).toBe(false);
    expect(nodes.validateResult!({ name: 'root', children: [{ name: 'leaf', children: [] }] })).toBe(true);
    const long = registry.get(names[1]!)!;
    expect(long.description.length).toBeLessThanOrEqual(200);
    expect(long.description.endsWith('…')).toBe(true);
  });
});

describe('OpenAPI 3.0 schemas', () => {
  it('turns nullable, boolean exclusive bounds and documentation keywords into strict JSON Schema', () => {
    expect(
      toJsonSchema({
        type: 'integer',
        nullable: true,
        minimum: 1,
        exclusiveMinimum: true,
        example: 3,
        xml: { name: 'n' },
        'x-go-type': 'int',
        format: 'int64',
      }),
    ).toEqual({ type: ['integer', 'null'], exclusiveMinimum: 1, format: 'int64' });
    expect(toJsonSchema({ properties: { a: { type: 'string', format: 'made-up' } }, discriminator: { propertyName: 'a' } })).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
    });
    expect(toJsonSchema({ allOf: [{ $ref: '#/components/schemas/Self' }], nullable: true })).toEqual({
      anyOf: [{ allOf: [{ description: '(recursive: Self)' }] }, { type: 'null' }],
    });
  });
});

describe('requests built from arguments', () => {
  const [operation] = operationsOf({
    paths: {
      '/files/{path}/v/{version}': {
        get: {
          operationId: 'getFile',
          parameters: [
            { name: 'path', in: 'path', required: true, schema: { type: 'string' } },
            { name: 'version', in: 'path', required: true, schema: { type: 'integer' } },
            { name: 'tags', in: 'query', schema: { type: 'array', items: { type: 'string' } } },
            { name: 'ids', in: 'query', explode: false, schema: { type: 'array', items: { type: 'integer' } } },
            { name: 'filter', in: 'query', style: 'deepObject', schema: { type: 'object' } },
            { name: 'X-Tag', in: 'header', schema: { type: 'string' } },
          ],
          responses: {},
        },
      },
    },
  });

  it('encodes path values as one segment and queries pair by pair', () => {
    const built = buildRequest('t', operation!, {
      path: '../etc/passwd?x=1#y',
      version: 2,
      tags: ['a b', 'c&d'],
      ids: [1, 2],
      filter: { kind: 'x' },
      'X-Tag': 'v',
    });
    expect(built.path).toBe('/files/..%2Fetc%2Fpasswd%3Fx%3D1%23y/v/2?tags=a%20b&tags=c%26d&ids=1%2C2&filter%5Bkind%5D=x');
    expect(built.headers).toEqual({ 'x-tag': 'v' });
    expect(built.body).toBeNull();
    expect(encodePathValue('..')).toBe('%2E%2E');
    expect(encodePathValue('.')).toBe('%2E');
    expect(encodePathValue('a.b')).toBe('a.b');
    expect(encodePathValue('%2F')).toBe('%252F');
  });

  it('refuses a header argument holding a line break', () => {
    expect(() => buildRequest('t', operation!, { path: 'p', version: 1, 'X-Tag': 'v\r\nX-Admin: 1' })).toThrow(/cannot hold line breaks/);
  });
});
