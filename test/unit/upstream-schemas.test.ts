/**
 * Upstream schemas (docs/tool-sources.md): compiled leniently and on first use, cached by
 * schema hash, while plugin tools stay strict; the definition hash is the same either way.
 */
import { describe, expect, it } from 'vitest';
import { ok } from '../../src/tools/define.ts';
import { canonicalDataJson, canonicalJson, hashJson } from '../../src/tools/hash.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';
import { SchemaCompileError } from '../../src/errors.ts';

// What published documents are full of: keywords whose type is only implied, unknown keywords and formats.
const LOOSE = {
  type: 'object',
  properties: {
    payload: { additionalProperties: { type: 'string' }, nullable: true },
    when: { type: 'string', format: 'github-timestamp' },
    count: { type: 'integer', 'x-github': { since: 1 } },
  },
  required: ['count'],
};

const define = (name: string, parameters: Record<string, unknown>, result?: Record<string, unknown>) => ({
  name,
  description: `The ${name} tool.`,
  parameters,
  ...(result !== undefined && { result }),
  handler: () => ok(null, 'done'),
});

describe('upstream schemas', () => {
  it('refuses a loose schema from a plugin, and takes it from an upstream, still validating what it says', () => {
    const registry = new ToolRegistry();
    const own = registry.of(pluginSource('schemas.ts'));
    expect(() => own.registerTool(define('plugin_tool', LOOSE))).toThrow(SchemaCompileError);
    own.registerTool(define('upstream_tool', LOOSE, { additionalProperties: { type: 'integer' } }), { schemas: 'upstream' });
    const tool = registry.get('upstream_tool')!;
    expect(tool.validateParams({ count: 1, payload: { a: 'x' }, when: 'whenever' })).toBe(true);
    expect(tool.validateParams({ count: 'one' })).toBe(false);
    expect(tool.validateParams.errors?.[0]?.instancePath).toBe('/count');
    expect(tool.validateParams({ count: 1, extra: true })).toBe(false);
    expect(tool.validateResult!({ a: 1 })).toBe(true);
    expect(tool.validateResult!({ a: 'x' })).toBe(false);
  });

  it('hashes an upstream definition as docs/design.md says, and compiles an equal schema once', () => {
    const registry = new ToolRegistry();
    const own = registry.of(pluginSource('schemas.ts'));
    const shared = { type: 'object', properties: { q: { type: 'string', description: 'naïve “query” ✓' } } };
    own.registerTool(define('one', shared, { type: 'array', items: shared }), { schemas: 'upstream' });
    own.registerTool(define('two', { ...shared }), { schemas: 'upstream' });
    const one = registry.get('one')!;
    expect(one.hash).toBe(hashJson({ name: 'one', description: 'The one tool.', parameters: one.parameters, result: one.result }));
    expect(registry.get('two')!.hash).toBe(hashJson({ name: 'two', description: 'The two tool.', parameters: registry.get('two')!.parameters }));
    expect(registry.get('two')!.validateParams).toBe(one.validateParams);
  });

  it('writes shared subschemas once and the same canonical JSON', () => {
    const shared = { b: [1, 2.5, 'é\u2028'], a: { z: null, y: true } };
    const value = { x: shared, y: [shared, shared], n: -0, big: 1e21 };
    const memo = new WeakMap<object, string>();
    expect(canonicalDataJson(value, memo)).toBe(canonicalJson(value));
    expect(memo.get(shared)).toBe(canonicalJson(shared));
    expect(() => canonicalDataJson({ s: '\uD800' }, new WeakMap())).toThrow(/surrogate/);
  });

  it('leaves out an upstream tool whose parameters cannot compile, naming the pattern', () => {
    const registry = new ToolRegistry();
    const own = registry.of(pluginSource('schemas.ts'));
    expect(() => own.registerTool(define('bad', { type: 'object', properties: { q: { type: 'string', pattern: '([a-' } } }), { schemas: 'upstream' })).toThrow(
      /parameters schema does not compile: pattern/,
    );
    expect(registry.get('bad')).toBeUndefined();
  });
});
