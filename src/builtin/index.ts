/**
 * The built-in tools, in the groups BUILTINS names (default all): planning, introspect, results
 * (result_read), workspace (only with WORKSPACE_ROOT) and search.
 */
import { realpath, stat } from 'node:fs/promises';
import { type BuiltinGroup } from '../config.ts';
import { registerPlanningTools } from '../sessions/planning/tools.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { builtinSource } from '../tools/source.ts';
import { registerIntrospectTools, type IntrospectDeps } from './introspect.ts';
import { registerWorkspaceTools } from './workspace/tools.ts';
import { resultReadTool } from './result-read.ts';
import type { ResultResources } from '../store/results.ts';
import type { ToolDefinition } from '../tools/types.ts';
import type { ToolSearch } from '../toolsets/search.ts';
import { searchTools } from './search.ts';
import { ConfigError } from '../errors.ts';

export interface BuiltinDeps extends IntrospectDeps {
  workspaceRoot: string | null;
  results: ResultResources;
  /** The groups to serve (BUILTINS). */
  groups: ReadonlySet<BuiltinGroup>;
  /** The catalog's search index, for tool_search. */
  search: ToolSearch;
}

/** Each group's tools; a group BUILTINS leaves out registers nothing. */
const GROUPS: Record<BuiltinGroup, (registry: ToolRegistry, deps: BuiltinDeps) => Promise<void> | void> = {
  planning: (registry) => registerPlanningTools(registry.of(builtinSource('planning tools'))),
  introspect: (registry, deps) => registerIntrospectTools(registry.of(builtinSource('introspect tools')), deps),
  results: (registry, deps) =>
    registry.of(builtinSource('result_read tool')).registerTool(resultReadTool(deps.results) as unknown as ToolDefinition),
  workspace: async (registry, deps) => {
    if (deps.workspaceRoot === null) return;
    const root = await workspaceRoot(deps.workspaceRoot);
    registerWorkspaceTools(registry.of(builtinSource('workspace tools')), root);
  },
  search: (registry, deps) => {
    const own = registry.of(builtinSource('search tools'));
    for (const tool of searchTools(deps.search)) own.registerTool(tool);
  },
};

export async function registerBuiltins(registry: ToolRegistry, deps: BuiltinDeps): Promise<void> {
  for (const group of ['planning', 'introspect', 'results', 'workspace', 'search'] as const) {
    if (deps.groups.has(group)) await GROUPS[group](registry, deps);
  }
}

/** The root as a real path (symlinks resolved once), which must be an existing folder. */
async function workspaceRoot(given: string): Promise<string> {
  const root = await realpath(given).catch(() => null);
  if (root === null || !(await stat(root)).isDirectory()) throw new ConfigError(`WORKSPACE_ROOT "${given}" is not an existing folder`);
  return root;
}
