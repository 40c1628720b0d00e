/** code_api's TypeScript declarations from JSON Schemas (src/builtin/code/declarations.ts). */
import { describe, expect, it } from 'vitest';
import { declarationOf, declarationsOf } from '../../src/builtin/code/declarations.ts';
import type { RegisteredTool } from '../../src/tools/registry.ts';

function tool(name: string, parameters: Record<string, unknown>, result: Record<string, unknown> | null = null): RegisteredTool {
  return { name, description: `The ${name} tool. */ not the end`, parameters, result } as unknown as RegisteredTool;
}

describe('declarations of tools', () => {
  it('types enums, consts, unions, arrays, nullable, open objects and quoted names, with the descriptions as doc comments', () => {
    const text = declarationOf(
      tool('repos_list-for-org', {
        type: 'object',
        properties: {
          org: { type: 'string', description: 'The organization.' },
          type: { type: 'string', enum: ['all', 'public'] },
          per_page: { type: ['integer', 'null'] },
          kind: { const: 'fixed' },
          labels: { type: 'array', items: { anyOf: [{ type: 'string' }, { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] }] } },
          extra: { type: 'object', additionalProperties: { type: 'number' } },
          'x-odd name': { type: 'boolean', nullable: true },
        },
        required: ['org'],
      }),
    );
    expect(text).toBe(
      [
        '  /** The repos_list-for-org tool. * / not the end */',
        '  "repos_list-for-org"(args: {',
        '    /** The organization. */',
        '    org: string;',
        '    type?: "all" | "public";',
        '    per_page?: number | null;',
        '    kind?: "fixed";',
        '    labels?: (string | { name: string })[];',
        '    extra?: { [key: string]: number };',
        '    "x-odd name"?: boolean | null;',
        '  }): Promise<unknown>;',
      ].join('\n'),
    );
  });

  it('resolves local $refs, ends a cycle as unknown, and makes optional arguments optional', () => {
    const node = { type: 'object', properties: { value: { type: 'integer' }, next: { $ref: '#/$defs/node' } }, required: ['value'] };
    const text = declarationOf(tool('walk', { type: 'object', properties: { start: { $ref: '#/$defs/node' } }, $defs: { node } }));
    expect(text).toContain('walk(args?: {');
    expect(text).toContain('start?: { value: number; next?: unknown };');
  });

  it('shortens a deep result to a shape that fits, and declares every tool under one tools object', () => {
    const deep = (n: number): Record<string, unknown> =>
      n === 0 ? { type: 'string' } : { type: 'object', properties: Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`field_${i}`, deep(n - 1)])) };
    const text = declarationOf(tool('deep', { type: 'object', properties: {} }, deep(4)));
    expect(text.length).toBeLessThan(2000);
    expect(text).toContain('field_0?: object;');
    const all = declarationsOf([tool('a', { type: 'object', properties: {} }), tool('b', { type: 'object', properties: {} })]);
    expect(all).toMatch(
      /^\/\*\* Thrown by a tool call that fails[\s\S]*declare const tools: \{\n[\s\S]*a\(args\?: \{\}\): Promise<unknown>;\n[\s\S]*b\(args\?: \{\}\): Promise<unknown>;\n\};\n$/,
    );
  });
});
