/** The built-in tools: planning, introspect and result_read always, workspace when WORKSPACE_ROOT is set. */
import { realpath, stat } from 'node:fs/promises';
import { ConfigError } from '../config.ts';
import { registerPlanningTools } from '../sessions/planning/tools.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { registerIntrospectTools, type IntrospectDeps } from './introspect.ts';
import { registerWorkspaceTools } from './workspace/tools.ts';
import { resultReadTool } from './result-read.ts';
import type { ResultResources } from '../store/results.ts';
import type { ToolDefinition } from '../tools/types.ts';

export interface BuiltinDeps extends IntrospectDeps {
  workspaceRoot: string | null;
  results: ResultResources;
  maxContentChars: number;
}

export async function registerBuiltins(registry: ToolRegistry, deps: BuiltinDeps): Promise<void> {
  await registry.withSource('built-in planning tools', () => registerPlanningTools(registry));
  await registry.withSource('built-in introspect tools', () => registerIntrospectTools(registry, deps));
  await registry.withSource('built-in result_read tool', () => registry.registerTool(resultReadTool(deps.results, deps.maxContentChars) as unknown as ToolDefinition));
  if (deps.workspaceRoot !== null) {
    const root = await workspaceRoot(deps.workspaceRoot);
    await registry.withSource('built-in workspace tools', () => registerWorkspaceTools(registry, root));
  }
}

/** The root as a real path (symlinks resolved once), which must be an existing folder. */
async function workspaceRoot(given: string): Promise<string> {
  const root = await realpath(given).catch(() => null);
  if (root === null || !(await stat(root)).isDirectory()) throw new ConfigError(`WORKSPACE_ROOT "${given}" is not an existing folder`);
  return root;
}
