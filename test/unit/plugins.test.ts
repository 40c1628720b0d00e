import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { describe, it, expect } from 'vitest';
import { loadPlugins } from '../../src/tools/plugins.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { pluginSource } from '../../src/tools/source.ts';
import type { FakeDatabase } from './fixtures/registering-plugin.ts';
import { PluginLoadError, ToolDefinitionError } from '../../src/errors.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

/** Loads `entries` into a fresh registry and returns the error it must throw. */
async function loadFailure(entries: string[], cwd = FIXTURES): Promise<Error> {
  const registry = new ToolRegistry();
  try {
    await loadPlugins(registry, entries, cwd);
  } catch (err) {
    if (err instanceof Error) return err;
    throw new Error(`expected an Error, got ${String(err)}`, { cause: err });
  }
  throw new Error(`expected ${entries.join(', ')} to fail to load`);
}

describe('loadPlugins', () => {
  it('loads the example calculator plugin by a path relative to the working directory', async () => {
    const registry = new ToolRegistry();
    await loadPlugins(registry, ['examples/plugins/calculator.ts'], ROOT);
    expect(
      registry
        .list()
        .map((t) => t.name)
        .sort(),
    ).toEqual(['add', 'divide']);
    expect(registry.get('add')?.source).toEqual({ kind: 'plugin', name: 'examples/plugins/calculator.ts', label: 'examples/plugins/calculator.ts' });
  });

  it('loads the example notes plugin: a tool, a resource, a resource template and a prompt, each read for one request', async () => {
    const registry = new ToolRegistry();
    await loadPlugins(registry, ['examples/plugins/notes.ts'], ROOT);
    expect(registry.get('note_add')?.source.label).toBe('examples/plugins/notes.ts');
    expect(registry.entries.list('resource', null)[0]?.source).toEqual(registry.get('note_add')?.source);
    expect(registry.entries.list('resource', null).map((r) => r.uri)).toEqual(['notes://index']);
    const [template] = registry.entries.list('template', null);
    const [prompt] = registry.entries.list('prompt', null);
    const context = { caller: null, user: null, requestId: 'r', signal: new AbortController().signal, log: pino({ level: 'silent' }) };
    expect(await template!.read('notes://note/welcome', { title: 'welcome' }, context)).toEqual([
      { uri: 'notes://note/welcome', mimeType: 'text/plain', text: 'Notes live in memory while the server runs.' },
    ]);
    expect((await prompt!.complete!('tone', 'f', context, {})).values).toEqual(['formal']);
    expect((await prompt!.get({ title: 'welcome' }, context)).messages[1]!.content.text).toBe('Summarize the note above in a terse tone.');
    // Another source may not take a URI the plugin holds.
    const other = pluginSource('other.ts');
    expect(registry.entries.replaceSource(other, [{ ...registry.entries.list('resource', null)[0]!, source: other }])).toMatch(
      /already registered by examples/,
    );
  });

  it('loads the same plugin given as ./relative or absolute path', async () => {
    const relative = new ToolRegistry();
    await loadPlugins(relative, ['./examples/plugins/calculator.ts'], ROOT);
    const absolute = new ToolRegistry();
    await loadPlugins(absolute, [resolve(ROOT, 'examples/plugins/calculator.ts')], '/');
    expect(relative.get('divide')?.hash).toBe(absolute.get('divide')?.hash);
    // GET /sources and policy rules know a plugin given by an absolute path by its file's name; errors name the whole path.
    expect(absolute.get('divide')?.source).toEqual({ kind: 'plugin', name: 'calculator.ts', label: resolve(ROOT, 'examples/plugins/calculator.ts') });
  });

  it('registers tools whose handlers run: add(2, 3) gives a sum of 5', async () => {
    const registry = new ToolRegistry();
    await loadPlugins(registry, ['examples/plugins/calculator.ts'], ROOT);
    const add = registry.get('add');
    expect(add?.validateParams({ a: 2, b: 3 })).toBe(true);
    const result = await add?.handler({ a: 2, b: 3 }, {} as never);
    expect(result).toMatchObject({ success: true, value: { sum: 5 } });
  });

  it('loads several plugins in order, a plain .mjs one among them', async () => {
    const registry = new ToolRegistry();
    await loadPlugins(registry, [resolve(ROOT, 'examples/plugins/calculator.ts'), './single-tool.mjs'], FIXTURES);
    expect(registry.list().map((t) => t.name)).toEqual(['add', 'divide', 'echo']);
  });

  it('refuses a module that does not exist with a PluginLoadError naming it', async () => {
    const error = await loadFailure(['./does-not-exist.ts']);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect(error.message).toContain('./does-not-exist.ts');
  });

  it('refuses a package that is not installed with a PluginLoadError naming it', async () => {
    const error = await loadFailure(['toolport-plugin-not-installed']);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect(error.message).toContain('toolport-plugin-not-installed');
  });

  it('refuses a tool with a bad name with a ToolDefinitionError naming the module and the tool', async () => {
    const error = await loadFailure(['./bad-name-plugin.ts']);
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toContain('./bad-name-plugin.ts');
    expect(error.message).toContain('Bad Name');
  });

  it('runs a function export, which may register resources as well as tools', async () => {
    const registry = new ToolRegistry();
    await loadPlugins(registry, ['./registering-plugin.ts'], FIXTURES);
    expect(registry.get('db_find')?.source.label).toBe('./registering-plugin.ts');
    const db = registry.resources.get<FakeDatabase>('db');
    expect(db?.url).toBe('memory://fixture');
    expect(db?.find('r1')).toBe('first row');
  });

  it('refuses a default export that is a number with a PluginLoadError naming the module', async () => {
    const error = await loadFailure(['./number-plugin.ts']);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect(error.message).toContain('./number-plugin.ts');
  });

  it('reports a function export that throws as a PluginLoadError naming the module and the cause', async () => {
    const error = await loadFailure(['./throwing-plugin.ts']);
    expect(error).toBeInstanceOf(PluginLoadError);
    expect(error.message).toContain('./throwing-plugin.ts');
    expect(error.message).toContain('database unreachable');
  });

  it('refuses a plugin registering a tool name another plugin already took', async () => {
    const error = await loadFailure([resolve(ROOT, 'examples/plugins/calculator.ts'), resolve(ROOT, 'examples/plugins/calculator.ts')]);
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect(error.message).toContain('add');
  });
});
