/**
 * An upstream MCP tool as an ordinary toolport tool (docs/mcp-sources.md): `inputSchema` → parameters,
 * `outputSchema` → result, annotations, the description cut to 200; and its CallToolResult as a
 * ToolResult: structuredContent → value, text → message, other blocks → attachments, isError →
 * handler_error with the server's own text.
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { canonicalJson } from '../../tools/hash.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { Attachment, HandlerReturn, JsonSchema, ToolAnnotations, ToolDefinition } from '../../tools/types.ts';
import type { McpSourceConfig } from './config.ts';
import { toolNameFor } from '../names.ts';
import { federatedMeta } from './federation.ts';

const MAX_DESCRIPTION = 200;
const MAX_SERVER_TEXT = 2000;

/** A definition without its handler: what the catalog needs to know of an upstream tool. */
export type UpstreamDefinition = Omit<ToolDefinition, 'handler'>;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The schema as toolport compiles it: the meta-schema URI is the upstream's concern, not ours. */
function ownSchema(schema: Record<string, unknown>): JsonSchema {
  const { $schema: _metaSchema, ...rest } = schema;
  return rest;
}

function annotationsOf(tool: Tool): ToolAnnotations | undefined {
  const hints = tool.annotations;
  if (hints === undefined) return undefined;
  const annotations: ToolAnnotations = {};
  if (typeof hints.readOnlyHint === 'boolean') annotations.read_only = hints.readOnlyHint;
  if (typeof hints.destructiveHint === 'boolean') annotations.destructive = hints.destructiveHint;
  if (typeof hints.idempotentHint === 'boolean') annotations.idempotent = hints.idempotentHint;
  if (typeof hints.openWorldHint === 'boolean') annotations.open_world = hints.openWorldHint;
  return Object.keys(annotations).length === 0 ? undefined : annotations;
}

export function upstreamDefinition(tool: Tool, config: McpSourceConfig): UpstreamDefinition {
  const given = tool.description?.trim() || tool.title?.trim() || tool.annotations?.title?.trim();
  const description = cut(given || `Tool "${tool.name}" of the MCP server "${config.source}".`, MAX_DESCRIPTION);
  const override = { ...config.defaults, ...config.tools.get(tool.name) };
  const annotations = { ...annotationsOf(tool), ...override.annotations };
  return {
    name: toolNameFor(config.source, tool.name),
    description,
    parameters: ownSchema(tool.inputSchema),
    ...(tool.outputSchema !== undefined && { result: ownSchema(tool.outputSchema) }),
    ...(Object.keys(annotations).length > 0 && { annotations }),
    ...(override.idempotency !== undefined && { idempotency: override.idempotency }),
    ...(override.on_lost !== undefined && override.idempotency !== undefined && { on_lost: override.on_lost }),
    ...(override.timeout_ms !== undefined && { timeout_ms: override.timeout_ms }),
    // An MCP App's interface link points into toolport's namespace, where its resource is served.
    ...(tool._meta !== undefined && { _meta: federatedMeta(tool._meta, config.source) }),
  };
}

/** Whether the text already is the structured value's JSON (servers send both for old clients). */
function repeats(text: string, value: unknown): boolean {
  // An object's JSON starts with its bracket: most texts are not JSON at all, and a failed parse throws (costly per call).
  if (typeof value === 'object' && value !== null && text.trimStart()[0] !== (Array.isArray(value) ? '[' : '{')) return false;
  try {
    return canonicalJson(JSON.parse(text)) === canonicalJson(value);
  } catch {
    return false;
  }
}

export function toolResultOf(result: CallToolResult, toolName: string): HandlerReturn {
  const texts: string[] = [];
  const attachments: Attachment[] = [];
  for (const block of result.content ?? []) {
    if (block.type === 'text') texts.push(block.text);
    else attachments.push(block as Attachment);
  }
  const message = texts.join('\n');
  if (result.isError === true) {
    const said = cut(message.trim() || 'the server gave no reason', MAX_SERVER_TEXT);
    throw new ToolFailure('handler_error', `Tool "${toolName}" failed: ${said}`, said);
  }
  const structured = result.structuredContent;
  return {
    message,
    value: structured ?? null,
    // The model sees the value once: a text block that is its JSON already says it.
    ...(structured !== undefined && repeats(message, structured) && { exclude_value_from_context: true }),
    ...(attachments.length > 0 && { attachments }),
  };
}
