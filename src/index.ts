/** The public surface for plugin authors and embedders. */
export { defineTool, ok, error } from './tools/define.ts';
export { buildApp, type AppOptions } from './app.ts';
export { loadConfig, type Config } from './config.ts';
export type {
  ToolDefinition,
  ToolResult,
  ToolContext,
  SessionHandle,
  PluginRegistry,
  PluginExport,
  IdempotencyConfig,
  ToolAnnotations,
  ToolExample,
  NestedResult,
} from './tools/types.ts';
export type { InvocationResult, ToolError, ErrorCode } from './tools/outcome.ts';
