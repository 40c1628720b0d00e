/** TOOL_PLUGINS: ES modules (or packages) whose default export defines tools (docs/plugins.md). */
import { isGuardrail } from './guardrail.ts';
import type { WorkerPool } from './isolation/pool.ts';
import { exportedBy, importModule, specifierOf } from './plugin-module.ts';
import { type ToolRegistry } from './registry.ts';
import { pluginSource } from './source.ts';
import type { Isolation, PluginRegistry, ToolDefinition } from './types.ts';
import { PluginLoadError, ToolDefinitionError } from '../errors.ts';
import { isEntryDefinition } from './entry-definitions.ts';

export const ISOLATIONS: readonly Isolation[] = ['none', 'worker'];

export interface PluginOptions {
  /** Where its tools' handlers run unless a definition says otherwise (TOOL_ISOLATION, or the plugin's entry). Default `none`. */
  isolation?: Isolation;
  /** Runs the handlers of tools isolated with `worker`; without it (a scratch catalog that only checks definitions) they stay as defined. */
  workers?: WorkerPool | null;
}

/** The definition as registered: an isolated tool's handler runs its module's own handler in a worker. */
function placed(definition: ToolDefinition, entry: string, module: string, options: PluginOptions): ToolDefinition {
  const isolation = (definition as { isolation?: unknown }).isolation ?? options.isolation ?? 'none';
  const name = String((definition as { name?: unknown }).name);
  if (!ISOLATIONS.includes(isolation as Isolation)) throw new ToolDefinitionError(`${entry}: tool "${name}": isolation must be 'none' or 'worker'`);
  if (isolation === 'none' || !options.workers) return definition;
  return { ...definition, handler: options.workers.handlerFor({ module, tool: name }) };
}

export async function loadPlugin(registry: ToolRegistry, entry: string, cwd = process.cwd(), options: PluginOptions = {}): Promise<void> {
  let module: { default?: unknown };
  const specifier = specifierOf(entry, cwd);
  try {
    module = await importModule(specifier);
  } catch (err) {
    throw new PluginLoadError(`plugin ${entry} failed to load: ${err instanceof Error ? err.message : String(err)}`);
  }
  const exported = exportedBy(module);
  const own = registry.of(pluginSource(entry));
  const target: PluginRegistry = {
    registerTool: (definition) => own.registerTool(placed(definition, entry, specifier, options)),
    registerResource: own.registerResource,
    registerEntry: own.registerEntry,
    registerGuardrail: own.registerGuardrail,
  };
  if (typeof exported === 'function') {
    try {
      await (exported as (r: PluginRegistry) => unknown)(target);
    } catch (err) {
      if (err instanceof ToolDefinitionError) throw err;
      throw new PluginLoadError(`plugin ${entry} failed to register: ${err instanceof Error ? err.message : String(err)}`);
    }
    return;
  }
  if (exported === undefined || exported === null || typeof exported !== 'object') {
    throw new PluginLoadError(`plugin ${entry} must export by default a tool or guardrail definition, an array of them, or a function`);
  }
  const definitions = (Array.isArray(exported) ? exported : [exported]) as unknown[];
  for (const d of definitions) {
    if (isGuardrail(d)) target.registerGuardrail(d);
    else if (isEntryDefinition(d)) target.registerEntry(d);
    else target.registerTool(d as ToolDefinition);
  }
}

export async function loadPlugins(registry: ToolRegistry, entries: readonly string[], cwd = process.cwd(), options: PluginOptions = {}): Promise<void> {
  for (const entry of entries) await loadPlugin(registry, entry, cwd, options);
}
