import { describe, it, expect } from 'vitest';
import { ToolRegistry, catalogHash } from '../../src/tools/registry.ts';
import type { ToolDefinition } from '../../src/tools/types.ts';
import { ToolDefinitionError } from '../../src/errors.ts';
import { builtinSource, fileSource, pluginSource } from '../../src/tools/source.ts';

const SOURCE = pluginSource('my-plugin.ts');

function handler() {
  return { message: 'done' };
}

/** A valid definition; `overrides` replace or add fields (undefined removes nothing, it sets the field). */
function tool(overrides: Record<string, unknown> = {}): ToolDefinition {
  return {
    name: 'lookup',
    description: 'Look a record up by id.',
    parameters: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
    handler,
    ...overrides,
  } as ToolDefinition;
}

/** Registers `definition` as module SOURCE and returns the ToolDefinitionError it must cause. */
async function refusal(definition: unknown, registry = new ToolRegistry()): Promise<ToolDefinitionError> {
  try {
    registry.of(SOURCE).registerTool(definition as ToolDefinition);
  } catch (err) {
    if (err instanceof ToolDefinitionError) return err;
    throw new Error(`expected a ToolDefinitionError, got ${String(err)}`, { cause: err });
  }
  throw new Error('expected the definition to be refused, but it was registered');
}

function registered(definition: ToolDefinition) {
  const registry = new ToolRegistry();
  registry.of(SOURCE).registerTool(definition);
  const found = registry.get(definition.name);
  if (found === undefined) throw new Error(`${definition.name} was not registered`);
  return found;
}

describe('ToolRegistry: registering a tool', () => {
  it('registers a valid tool and lists it', () => {
    const registry = new ToolRegistry();
    registry.of(SOURCE).registerTool(tool());
    expect(registry.get('lookup')).toMatchObject({ name: 'lookup', description: 'Look a record up by id.', source: SOURCE });
    expect(registry.list().map((t) => t.name)).toEqual(['lookup']);
  });

  it('records the source that registered the tool: its kind, its name and its label', () => {
    const registry = new ToolRegistry();
    registry.of(builtinSource('planning tools')).registerTool(tool());
    registry.of(pluginSource('/srv/plugins/crm.ts')).registerTool(tool({ name: 'crm_find' }));
    expect(registry.get('lookup')?.source).toEqual({ kind: 'builtin', name: 'built-in', label: 'built-in planning tools' });
    expect(registry.get('crm_find')?.source).toEqual({ kind: 'plugin', name: 'crm.ts', label: '/srv/plugins/crm.ts' });
  });

  it('keeps examples, annotations, timeout and normalized idempotency', () => {
    const found = registered(
      tool({
        examples: [{ description: 'by id', input: { id: 'r1' }, output: null }],
        annotations: { read_only: true, open_world: false },
        timeout_ms: 2500,
        idempotency: { strategy: 'params', param_keys: ['id'] },
      }),
    );
    expect(found.examples).toEqual([{ description: 'by id', input: { id: 'r1' }, output: null }]);
    expect(found.annotations).toEqual({ read_only: true, open_world: false });
    expect(found.timeoutMs).toBe(2500);
    expect(found.idempotency).toEqual({ strategy: 'params', param_keys: ['id'], ttl_s: 86400, scope: 'session', on_lost: 'unknown' });
  });

  it('accepts names of 1 and 64 characters made of a-z, 0-9, _ and -', () => {
    const registry = new ToolRegistry();
    registry.of(SOURCE).registerTool(tool({ name: 'x' }));
    registry.of(SOURCE).registerTool(tool({ name: 'a'.repeat(64) }));
    registry.of(SOURCE).registerTool(tool({ name: 'get_user-v2' }));
    expect(registry.list()).toHaveLength(3);
  });

  it('accepts a description of exactly 200 characters', () => {
    expect(registered(tool({ description: 'd'.repeat(200) })).description).toHaveLength(200);
  });
});

describe('ToolRegistry: refusing a bad definition names the module and the tool', () => {
  it.each([
    ['uppercase letters', 'Lookup'],
    ['a space', 'look up'],
    ['65 characters', 'a'.repeat(65)],
    ['a dot', 'look.up'],
  ])('refuses a name with %s', async (_what, name) => {
    const error = await refusal(tool({ name }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain(name);
    expect(error.message).toMatch(/name/);
  });

  it('refuses an empty name, naming the module', async () => {
    const error = await refusal(tool({ name: '' }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toMatch(/name/);
  });

  it.each([
    ['empty', ''],
    ['201 characters long', 'd'.repeat(201)],
  ])('refuses a description that is %s', async (_what, description) => {
    const error = await refusal(tool({ description }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/description/);
  });

  it('refuses a second tool with a taken name and names the module that took it', async () => {
    const registry = new ToolRegistry();
    registry.of(pluginSource('first-plugin.ts')).registerTool(tool());
    const error = await refusal(tool({ description: 'Another lookup.' }), registry);
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toContain('first-plugin.ts');
    expect(registry.get('lookup')?.description).toBe('Look a record up by id.');
  });

  it.each([
    ['type array', { type: 'array', items: { type: 'string' } }],
    ['no type', { properties: { id: { type: 'string' } } }],
    ['not an object', 'object'],
  ])('refuses parameters with %s', async (_what, parameters) => {
    const error = await refusal(tool({ parameters }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/parameters/);
  });

  it('refuses a parameters schema that does not compile under strict mode (unknown keyword)', async () => {
    const error = await refusal(tool({ parameters: { type: 'object', properties: { a: { type: 'string', foo: 1 } } } }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/does not compile/);
    expect(error.message).toContain('foo');
  });

  it('refuses a result schema that does not compile', async () => {
    const error = await refusal(tool({ result: { type: 'object', properties: { n: { type: 'integr' } } } }));
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/result/);
  });

  it('refuses a handler that is not a function', async () => {
    const error = await refusal(tool({ handler: 'run' }));
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/handler/);
  });

  it('refuses an example whose input does not match the parameters', async () => {
    const error = await refusal(tool({ examples: [{ description: 'wrong', input: { id: 7 }, output: null }] }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/examples\[0\]\.input/);
    expect(error.message).toContain('/id');
  });

  it('refuses an example whose input has an undeclared property', async () => {
    const error = await refusal(tool({ examples: [{ description: 'extra', input: { id: 'a', extra: 1 }, output: null }] }));
    expect(error.message).toMatch(/examples\[0\]\.input/);
    expect(error.message).toContain('extra');
  });

  it('refuses an example whose output does not match the result schema', async () => {
    const error = await refusal(
      tool({
        result: { type: 'object', properties: { found: { type: 'boolean' } }, required: ['found'] },
        examples: [
          { description: 'ok', input: { id: 'a' }, output: { found: true } },
          { description: 'bad', input: { id: 'b' }, output: { found: 'yes' } },
        ],
      }),
    );
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/examples\[1\]\.output/);
  });

  it('refuses an example description longer than 200 characters', async () => {
    const error = await refusal(tool({ examples: [{ description: 'e'.repeat(201), input: { id: 'a' }, output: null }] }));
    expect(error.message).toMatch(/examples\[0\]\.description/);
  });

  it.each([
    [
      'strategy "params" without param_keys',
      { strategy: 'params' },
      /param_keys is required with strategy "params": list the parameters that identify the call/,
    ],
    ['param_keys naming an undeclared property', { strategy: 'params', param_keys: ['id', 'nope'] }, /param_keys/],
    ['strategy "custom" without a key function', { strategy: 'custom' }, /key/],
    ['ttl_s 0', { strategy: 'auto', ttl_s: 0 }, /ttl_s/],
    ['ttl_s 1.5', { strategy: 'auto', ttl_s: 1.5 }, /ttl_s/],
    ['an unknown strategy', { strategy: 'always' }, /strategy/],
    ['an unknown scope', { strategy: 'auto', scope: 'tenant' }, /scope/],
  ])('refuses idempotency with %s', async (_what, idempotency, problem) => {
    const error = await refusal(tool({ idempotency }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(problem);
  });

  it('accepts idempotency that never expires (ttl_s null) and a custom key function', () => {
    const found = registered(tool({ idempotency: { strategy: 'custom', key: () => 'k', ttl_s: null, scope: 'global' } }));
    expect(found.idempotency).toEqual({ strategy: 'custom', ttl_s: null, scope: 'global', on_lost: 'unknown' });
    expect(found.keyFunction).toBeTypeOf('function');
  });

  it.each([
    ['an unknown hint', { read_only: true, cached: true }, /cached/],
    ['a hint that is not a boolean', { destructive: 'yes' }, /destructive/],
    ['annotations that are not an object', 'read_only', /annotations/],
  ])('refuses annotations with %s', async (_what, annotations, problem) => {
    const error = await refusal(tool({ annotations }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(problem);
  });

  it.each([0, -5, 1.5, '1000'])('refuses timeout_ms %j', async (timeout_ms) => {
    const error = await refusal(tool({ timeout_ms }));
    expect(error.message).toContain(SOURCE.label);
    expect(error.message).toContain('lookup');
    expect(error.message).toMatch(/timeout_ms/);
  });

  it('registers nothing when a definition is refused', async () => {
    const registry = new ToolRegistry();
    await refusal(tool({ timeout_ms: 0 }), registry);
    expect(registry.get('lookup')).toBeUndefined();
    expect(registry.list()).toEqual([]);
  });

  it('lets a source replace only its own tools: a name another source holds is refused, changing nothing', () => {
    const registry = new ToolRegistry();
    const files = fileSource('mcp', 'files', 'TOOLS_FILE tools.yaml: mcp[0] "files"');
    registry.of(SOURCE).registerTool(tool());
    registry.replaceSource(files, [tool({ name: 'files_read' }), tool({ name: 'files_list' })]);
    registry.replaceSource(files, [tool({ name: 'files_read', description: 'Read a file.' })]);
    expect(registry.list().map((t) => [t.name, t.source.name])).toEqual([
      ['lookup', 'my-plugin.ts'],
      ['files_read', 'files'],
    ]);
    expect(() => registry.replaceSource(files, [tool()])).toThrow(
      /TOOLS_FILE tools.yaml: mcp\[0\] "files": tool "lookup": name is already taken by my-plugin.ts/,
    );
    expect(registry.get('files_read')?.description).toBe('Read a file.');
  });
});

describe('ToolRegistry: undeclared properties are refused unless the schema says otherwise', () => {
  it('adds additionalProperties: false to the served schema and refuses an extra property', () => {
    const found = registered(tool());
    expect(found.parameters).toEqual({
      type: 'object',
      properties: { id: { type: 'string' } },
      required: ['id'],
      additionalProperties: false,
    });
    expect(found.validateParams({ id: 'a' })).toBe(true);
    expect(found.validateParams({ id: 'a', extra: 1 })).toBe(false);
  });

  it('does not change the definition object the plugin passed in', () => {
    const definition = tool();
    registered(definition);
    expect(definition.parameters).not.toHaveProperty('additionalProperties');
  });

  it('closes nested objects and objects inside arrays too', () => {
    const found = registered(
      tool({
        name: 'nested',
        parameters: {
          type: 'object',
          properties: {
            filter: { type: 'object', properties: { field: { type: 'string' } } },
            rows: { type: 'array', items: { type: 'object', properties: { n: { type: 'number' } } } },
          },
        },
      }),
    );
    const properties = found.parameters.properties as Record<string, Record<string, unknown>>;
    expect(properties.filter).toHaveProperty('additionalProperties', false);
    expect(properties.rows?.items).toHaveProperty('additionalProperties', false);
    expect(found.validateParams({ filter: { field: 'x' }, rows: [{ n: 1 }] })).toBe(true);
    expect(found.validateParams({ filter: { field: 'x', other: 1 } })).toBe(false);
    expect(found.validateParams({ rows: [{ n: 1, other: 2 }] })).toBe(false);
  });

  it('leaves allOf branches open so they can share properties', () => {
    const found = registered(
      tool({
        name: 'merged',
        parameters: {
          type: 'object',
          allOf: [
            { properties: { a: { type: 'number' } }, required: ['a'] },
            { properties: { b: { type: 'number' } }, required: ['b'] },
          ],
        },
      }),
    );
    const branches = found.parameters.allOf as Record<string, unknown>[];
    expect(branches.every((branch) => !('additionalProperties' in branch))).toBe(true);
    expect(found.validateParams({ a: 1, b: 2 })).toBe(true);
  });

  it('keeps additionalProperties where the schema sets it itself', () => {
    const found = registered(
      tool({
        name: 'labels',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string' } },
          additionalProperties: { type: 'string' },
        },
      }),
    );
    expect(found.parameters.additionalProperties).toEqual({ type: 'string' });
    expect(found.validateParams({ id: 'a', colour: 'red' })).toBe(true);
    expect(found.validateParams({ id: 'a', colour: 3 })).toBe(false);
  });

  it('keeps additionalProperties: true when the schema allows any extra property', () => {
    const found = registered(tool({ name: 'open', parameters: { type: 'object', properties: { id: { type: 'string' } }, additionalProperties: true } }));
    expect(found.validateParams({ id: 'a', anything: [1, 2] })).toBe(true);
  });

  it('lets oneOf branches add properties beside the ones the parent object declares', () => {
    // Shared properties at the top, one variant per branch: a common way to describe alternatives.
    const found = registered(
      tool({
        name: 'variant',
        parameters: {
          type: 'object',
          properties: { id: { type: 'string' } },
          required: ['id'],
          oneOf: [
            { properties: { x: { type: 'number' } }, required: ['x'] },
            { properties: { y: { type: 'number' } }, required: ['y'] },
          ],
        },
      }),
    );
    expect(found.validateParams({ id: 'a', x: 1 })).toBe(true);
    expect(found.validateParams({ id: 'a', y: 2 })).toBe(true);
  });

  it('keeps if/then/else conditions meaning what they say', () => {
    const found = registered(
      tool({
        name: 'address',
        parameters: {
          type: 'object',
          properties: { country: { type: 'string' }, zip: { type: 'string' }, postcode: { type: 'string' } },
          required: ['country'],
          if: { properties: { country: { const: 'US' } } },
          then: { properties: { zip: { type: 'string' } }, required: ['zip'] },
          else: { properties: { postcode: { type: 'string' } }, required: ['postcode'] },
        },
      }),
    );
    expect(found.validateParams({ country: 'US', zip: '94110' })).toBe(true);
    expect(found.validateParams({ country: 'FR', postcode: '75001' })).toBe(true);
    expect(found.validateParams({ country: 'US', postcode: '75001' })).toBe(false);
  });

  it('keeps a "not" condition refusing what it names', () => {
    const found = registered(
      tool({
        name: 'modes',
        parameters: {
          type: 'object',
          properties: { mode: { type: 'string' }, level: { type: 'number' } },
          not: { properties: { mode: { const: 'forbidden' } }, required: ['mode'] },
        },
      }),
    );
    expect(found.validateParams({ mode: 'allowed', level: 1 })).toBe(true);
    expect(found.validateParams({ mode: 'forbidden' })).toBe(false);
    expect(found.validateParams({ mode: 'forbidden', level: 1 })).toBe(false);
  });
});

describe('ToolRegistry: arguments are validated without coercion', () => {
  it('refuses a string where a number is declared and leaves the data as it was', () => {
    const found = registered(tool({ name: 'numbers', parameters: { type: 'object', properties: { a: { type: 'number' } } } }));
    const data = { a: '1' };
    expect(found.validateParams(data)).toBe(false);
    expect(data).toEqual({ a: '1' });
    expect(found.validateParams.errors?.[0]?.instancePath).toBe('/a');
  });

  it('neither fills in defaults nor strips undeclared properties', () => {
    const found = registered(tool({ name: 'defaults', parameters: { type: 'object', properties: { limit: { type: 'number', default: 10 } } } }));
    const empty = {};
    expect(found.validateParams(empty)).toBe(true);
    expect(empty).toEqual({});
    const extra = { limit: 5, other: true };
    expect(found.validateParams(extra)).toBe(false);
    expect(extra).toEqual({ limit: 5, other: true });
  });
});

describe('ToolRegistry: tool hash', () => {
  it('is 64 lowercase hex characters (SHA-256)', () => {
    expect(registered(tool()).hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('is the same whatever the key order of the definition', () => {
    const a = registered({
      name: 'lookup',
      description: 'Look a record up by id.',
      parameters: { type: 'object', properties: { id: { type: 'string' }, n: { type: 'number' } }, required: ['id'] },
      result: { type: 'object', properties: { ok: { type: 'boolean' } } },
      handler,
    });
    const b = registered({
      handler,
      result: { properties: { ok: { type: 'boolean' } }, type: 'object' },
      parameters: { required: ['id'], properties: { n: { type: 'number' }, id: { type: 'string' } }, type: 'object' },
      description: 'Look a record up by id.',
      name: 'lookup',
    });
    expect(a.hash).toBe(b.hash);
  });

  it('changes when the description changes', () => {
    expect(registered(tool()).hash).not.toBe(registered(tool({ description: 'Find a record by id.' })).hash);
  });

  it('changes when the name changes', () => {
    expect(registered(tool()).hash).not.toBe(registered(tool({ name: 'find' })).hash);
  });

  it('changes when the parameters schema changes', () => {
    const changed = tool({ parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] } });
    expect(registered(tool()).hash).not.toBe(registered(changed).hash);
  });

  it('changes when the result schema is added or changed', () => {
    const plain = registered(tool()).hash;
    const withResult = registered(tool({ result: { type: 'object' } })).hash;
    const otherResult = registered(tool({ result: { type: 'array' } })).hash;
    expect(new Set([plain, withResult, otherResult]).size).toBe(3);
  });

  it('is unaffected by the handler, examples, annotations, idempotency and timeout', () => {
    const base = registered(tool()).hash;
    const decorated = registered(
      tool({
        handler: () => ({ message: 'something else' }),
        examples: [{ description: 'by id', input: { id: 'r1' }, output: null }],
        annotations: { read_only: true },
        idempotency: { strategy: 'auto' },
        timeout_ms: 100,
      }),
    ).hash;
    expect(decorated).toBe(base);
  });
});

describe('catalogHash', () => {
  it('is the same whatever order the tools were registered in', () => {
    const forward = new ToolRegistry();
    const backward = new ToolRegistry();
    const definitions = [tool({ name: 'a' }), tool({ name: 'b' }), tool({ name: 'c' })];
    definitions.forEach((d) => forward.of(SOURCE).registerTool(d));
    [...definitions].reverse().forEach((d) => backward.of(SOURCE).registerTool(d));
    expect(catalogHash(forward.list())).toMatch(/^[0-9a-f]{64}$/);
    expect(catalogHash(forward.list())).toBe(catalogHash(backward.list()));
  });

  it('changes when a tool is added or one changes', () => {
    const two = new ToolRegistry();
    two.of(SOURCE).registerTool(tool({ name: 'a' }));
    two.of(SOURCE).registerTool(tool({ name: 'b' }));
    const three = new ToolRegistry();
    three.of(SOURCE).registerTool(tool({ name: 'a' }));
    three.of(SOURCE).registerTool(tool({ name: 'b' }));
    three.of(SOURCE).registerTool(tool({ name: 'c' }));
    const changed = new ToolRegistry();
    changed.of(SOURCE).registerTool(tool({ name: 'a' }));
    changed.of(SOURCE).registerTool(tool({ name: 'b', description: 'Changed.' }));
    const hashes = [two, three, changed].map((r) => catalogHash(r.list()));
    expect(new Set(hashes).size).toBe(3);
  });
});
