/**
 * MCP: `tools/call` params in, `CallToolResult` out, MCP `Tool` definitions. Its calls look like
 * native ones, so it is only used with ?format=mcp. MCP has no turn of its own; toolport takes
 * `{"calls":[…params…]}` as one, like native, and answers a CallToolResult per call.
 */
import { NoToolCall } from '../errors.ts';
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import type { Attachment, JsonSchema } from '../tools/types.ts';
import { callId } from './native.ts';
import { callOrTurn, objectArguments } from './turn.ts';
import { isObject } from '../json.ts';
import type { Format } from './types.ts';

const CALL = '{"name","arguments":{…}}';
const SHAPES = `mcp ${CALL} (tools/call params) or {"calls":[…]}, with ?format=mcp`;

/** MCP's link to a resource the client may read with resources/read (here: a large result's whole). */
export interface McpResourceLink {
  type: 'resource_link';
  uri: string;
  name: string;
  description: string;
  mimeType: 'text/plain';
}

export interface McpCallToolResult {
  /** The text, then any other blocks the tool returned (images, resources) unchanged, then the link to a kept whole. */
  content: ({ type: 'text'; text: string } | Attachment | McpResourceLink)[];
  structuredContent?: Record<string, unknown>;
  isError: boolean;
  /** `toolport/guardrails`: what the guardrails did to the call, when they did anything (docs/guardrails.md). */
  _meta?: Record<string, unknown>;
}

export interface McpToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema?: JsonSchema & { type: 'object' };
  annotations?: McpToolAnnotations;
  _meta?: Readonly<Record<string, unknown>>;
}

function isCall(body: unknown): body is Record<string, unknown> {
  return isObject(body) && typeof body.name === 'string';
}

function pickCall(item: unknown, where: string): ToolCall {
  if (!isCall(item)) throw new NoToolCall(`${where} is not a tool call: expected ${CALL}`);
  // tools/call params carry no call id of their own; `_meta` and the rest are not arguments.
  return { id: callId(item.id, where), name: item.name as string, ...objectArguments(item.arguments) };
}

/**
 * `structuredContent` is the value when it is a JSON object the model may see: MCP allows only an
 * object there, and a value kept out of the context is kept out of it too.
 */
export function renderMcpCallToolResult(result: AnsweredResult): McpCallToolResult {
  // exclude_value_from_context shapes the text only: structuredContent is the client's
  // machine-readable copy, and a client that read the tool's outputSchema requires it.
  const structured = result.success && isObject(result.value);
  const kept = result.result_ref;
  const link: McpResourceLink[] =
    kept === undefined
      ? []
      : [
          {
            type: 'resource_link',
            uri: kept.uri,
            name: `result of ${result.name}`,
            description: `the whole result (${kept.chars} characters); the text above is cut`,
            mimeType: 'text/plain',
          },
        ];
  return {
    content: [{ type: 'text', text: structured ? unrepeated(result) : result.content }, ...(result.attachments ?? []), ...link],
    ...(structured && { structuredContent: result.value as Record<string, unknown> }),
    isError: !result.success,
    ...(result.guardrails !== undefined && { _meta: { 'toolport/guardrails': result.guardrails } }),
  };
}

/**
 * The text block without the message when the value says it again (`{"text": <the message>, …}`,
 * as servers that wrap their text do): the block is then the value's JSON alone, said once.
 */
function unrepeated(result: AnsweredResult): string {
  const head = `${result.message}\n\n`;
  if (result.message === '' || !result.content.startsWith(head)) return result.content;
  const said = Object.values(result.value as Record<string, unknown>).some((leaf) => leaf === result.message);
  return said ? result.content.slice(head.length) : result.content;
}

export function renderMcpTool(tool: RegisteredTool): McpTool {
  const a = tool.annotations;
  const annotations: McpToolAnnotations = {};
  if (a?.read_only !== undefined) annotations.readOnlyHint = a.read_only;
  if (a?.destructive !== undefined) annotations.destructiveHint = a.destructive;
  if (a?.idempotent !== undefined) annotations.idempotentHint = a.idempotent;
  if (a?.open_world !== undefined) annotations.openWorldHint = a.open_world;
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.parameters as McpTool['inputSchema'],
    // MCP output schemas describe an object; a tool whose value is another type has none.
    ...(tool.result?.type === 'object' && { outputSchema: tool.result as McpTool['inputSchema'] }),
    ...(Object.keys(annotations).length > 0 && { annotations }),
    ...(tool.meta !== null && { _meta: tool.meta }),
  };
}

export const mcpFormat: Format = {
  name: 'mcp',
  ...callOrTurn('calls', SHAPES, isCall, pickCall),
  toolMessage: renderMcpCallToolResult,
  turnMessages: (results) => results.map(renderMcpCallToolResult),
  renderTool: renderMcpTool,
};
