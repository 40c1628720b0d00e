/** Helpers for plugin authors: typed definitions and ToolResult builders. */
import type { ToolDefinition, ToolResult } from './types.ts';

/** Identity at run time; gives TypeScript plugins typed params and results. */
export function defineTool<P = Record<string, unknown>, V = unknown>(definition: ToolDefinition<P, V>): ToolDefinition<P, V> {
  return definition;
}

export function ok<V>(value: V | null, message = ''): ToolResult<V> {
  return { message, value, success: true, exclude_value_from_context: false };
}

export function error(message: string): ToolResult<never> {
  return { message, value: null, success: false, exclude_value_from_context: false };
}
