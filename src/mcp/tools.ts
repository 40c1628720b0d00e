/** Tools as MCP lists them, and a toolport result as an MCP CallToolResult. */
import type { InvocationResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { ToolAnnotations } from '../tools/types.ts';
import { isObject } from './protocol.ts';

const HINTS: Record<keyof ToolAnnotations, string> = {
  read_only: 'readOnlyHint',
  destructive: 'destructiveHint',
  idempotent: 'idempotentHint',
  open_world: 'openWorldHint',
};

function renderAnnotations(annotations: ToolAnnotations): Record<string, boolean> {
  const hints: Record<string, boolean> = {};
  for (const [key, value] of Object.entries(annotations)) hints[HINTS[key as keyof ToolAnnotations]] = value as boolean;
  return hints;
}

/**
 * `outputSchema` only for an object result schema: the handshake-era clients refuse any other root,
 * and structuredContent is only ever an object.
 */
export function renderMcpTool(tool: RegisteredTool): Record<string, unknown> {
  const rendered: Record<string, unknown> = { name: tool.name, description: tool.description, inputSchema: tool.parameters };
  if (tool.result !== null && tool.result.type === 'object') rendered.outputSchema = tool.result;
  if (tool.annotations !== null) rendered.annotations = renderAnnotations(tool.annotations);
  return rendered;
}

/**
 * CallToolResult: the model's text as one text block; the value as structuredContent when it is an
 * object; failures as isError. `exclude_value_from_context` shapes the text only: structuredContent
 * is the client's machine-readable copy, and a client that read an outputSchema requires it.
 */
export function renderCallToolResult(result: InvocationResult): Record<string, unknown> {
  const rendered: Record<string, unknown> = { content: [{ type: 'text', text: result.content }] };
  if (result.success && isObject(result.value)) rendered.structuredContent = result.value;
  rendered.isError = !result.success;
  return rendered;
}
