/** TOOL_PLUGINS: ES modules (or packages) whose default export defines tools (SPEC §2.1). */
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { resolvePackageEntry } from './package-entry.ts';
import { ToolDefinitionError, type ToolRegistry } from './registry.ts';
import type { ToolDefinition } from './types.ts';

export class PluginLoadError extends Error {
  override name = 'PluginLoadError';
}

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

export async function loadPlugin(registry: ToolRegistry, entry: string, cwd = process.cwd()): Promise<void> {
  let module: { default?: unknown };
  try {
    module = (await import(specifierOf(entry, cwd))) as { default?: unknown };
  } catch (err) {
    throw new PluginLoadError(`plugin ${entry} failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  const exported = module.default;
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
  const definitions = (Array.isArray(exported) ? exported : [exported]) as ToolDefinition[];
  await registry.withSource(entry, () => definitions.forEach((d) => registry.registerTool(d)));
}

export async function loadPlugins(registry: ToolRegistry, entries: readonly string[], cwd = process.cwd()): Promise<void> {
  for (const entry of entries) await loadPlugin(registry, entry, cwd);
}
