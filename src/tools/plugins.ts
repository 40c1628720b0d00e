/** TOOL_PLUGINS: ES modules (or packages) whose default export defines tools (docs/plugins.md). */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolvePackageEntry } from './package-entry.ts';
import { type ToolRegistry } from './registry.ts';
import type { ToolDefinition } from './types.ts';
import { isEntryDefinition } from './entry-definitions.ts';
import { PluginLoadError, ToolDefinitionError } from '../errors.ts';

/**
 * A path (relative to `cwd`) or a package name, found from `cwd` first (the user's project, or
 * the tools file's folder), else from toolport's own location.
 */
function specifierOf(entry: string, cwd: string): string {
  const looksLikePath = entry.startsWith('.') || isAbsolute(entry) || /\.(m?js|c?js|m?ts|cts)$/.test(entry);
  if (looksLikePath) return pathToFileURL(resolve(cwd, entry)).href;
  const found = resolvePackageEntry(entry, cwd);
  return found === null ? entry : pathToFileURL(found).href;
}

/** Whether the nearest package.json above `file` says `"type": "module"`. */
function inModulePackage(file: string): boolean {
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(folder) === folder) return false;
  }
}

/**
 * A TypeScript file its project treats as CommonJS (`.cts`, or `.ts` without `"type": "module"`)
 * cannot go through `import()`: Node hands it to the CommonJS loader, which meets ES syntax and
 * fails with "require() … in a cycle". tsx's own importer compiles it in either module system.
 */
async function importModule(specifier: string): Promise<{ default?: unknown }> {
  const file = specifier.startsWith('file:') ? fileURLToPath(specifier) : null;
  if (file !== null && (file.endsWith('.cts') || (file.endsWith('.ts') && !inModulePackage(file)))) {
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(specifier, import.meta.url)) as { default?: unknown };
  }
  return (await import(specifier)) as { default?: unknown };
}

/** The definitions a module exports: ES `export default`, or CommonJS `module.exports` (and compiled `exports.default`). */
function exportedBy(module: { default?: unknown }): unknown {
  const exported = module.default;
  const inner = typeof exported === 'object' && exported !== null && !Array.isArray(exported) ? (exported as { default?: unknown; handler?: unknown }) : null;
  return inner !== null && inner.default !== undefined && inner.handler === undefined ? inner.default : exported;
}

export async function loadPlugin(registry: ToolRegistry, entry: string, cwd = process.cwd()): Promise<void> {
  let module: { default?: unknown };
  try {
    module = await importModule(specifierOf(entry, cwd));
  } catch (err) {
    throw new PluginLoadError(`plugin ${entry} failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  const exported = exportedBy(module);
  if (typeof exported === 'function') {
    try {
      await registry.withSource(entry, () => (exported as (r: ToolRegistry) => unknown)(registry));
    } catch (err) {
      if (err instanceof ToolDefinitionError) throw err;
      throw new PluginLoadError(`plugin ${entry} failed to register: ${err instanceof Error ? err.message : String(err)}`);
    }
    return;
  }
  if (exported === undefined || exported === null || typeof exported !== 'object') {
    throw new PluginLoadError(`plugin ${entry} must export by default a tool definition, an array of them, or a function`);
  }
  const definitions = (Array.isArray(exported) ? exported : [exported]) as unknown[];
  await registry.withSource(entry, () =>
    definitions.forEach((d) => (isEntryDefinition(d) ? registry.registerEntry(d) : registry.registerTool(d as ToolDefinition))),
  );
}

export async function loadPlugins(registry: ToolRegistry, entries: readonly string[], cwd = process.cwd()): Promise<void> {
  for (const entry of entries) await loadPlugin(registry, entry, cwd);
}
