/**
 * tool_search and tool_invoke (docs/toolsets.md, group `search` of BUILTINS): a model given only these two
 * finds the tools it needs and calls them. A search shows only what the caller may call in the
 * current toolset; tool_invoke is a nested call, so it passes the whole pipeline (validation,
 * policy, ledger, sessions) as a direct call does, and its result is the invoked tool's own.
 */
import { nativeFormat } from '../formats/native.ts';
import { CallContext } from '../tools/context.ts';
import { ok } from '../tools/define.ts';
import { ToolFailure, type HandlerFailureCode } from '../tools/failure.ts';
import type { ToolDefinition } from '../tools/types.ts';
import { MAX_LIMIT, MAX_QUERY_CHARS, type ToolSearch } from '../toolsets/search.ts';

const DEFAULT_LIMIT = 8;

function allowsOf(context: unknown): ((tool: string) => boolean) | undefined {
  return context instanceof CallContext ? (tool) => context.mayCall(tool) : undefined;
}

export function searchTools(search: ToolSearch): ToolDefinition[] {
  const toolSearch: ToolDefinition<{ query: string; limit?: number }> = {
    name: 'tool_search',
    description: 'Find the tools for a task: describe it in a few words; answers the best matching tools with their parameters. Call one with tool_invoke.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'what you want to do, in plain words' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `how many tools at most (default ${DEFAULT_LIMIT})` },
      },
      required: ['query'],
    },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: (params, context) => {
      const hits = search.search(params.query, params.limit ?? DEFAULT_LIMIT, allowsOf(context));
      const value = { tools: hits.map((h) => ({ ...(nativeFormat.renderTool(h.tool) as Record<string, unknown>), score: h.score })), query: params.query };
      const lines = hits.map((h) => `- ${h.tool.name}: ${h.tool.description.split(/(?<=\.)\s/)[0]}`);
      return ok(
        value,
        hits.length === 0 ? 'No tool matches; try other words.' : `Tools for "${params.query}" (call one with tool_invoke):\n${lines.join('\n')}`,
      );
    },
  };
  const toolInvoke: ToolDefinition<{ name: string; arguments?: Record<string, unknown> }> = {
    name: 'tool_invoke',
    description: 'Call a tool that tool_search found, by its name, with its arguments as an object.',
    parameters: {
      type: 'object',
      properties: {
        name: { type: 'string', pattern: '^[a-z0-9_-]{1,64}$', description: 'the tool name tool_search answered' },
        arguments: { type: 'object', description: "the tool's arguments, as its parameters describe them" },
      },
      required: ['name'],
    },
    handler: async (params, context) => {
      if (params.name === 'tool_invoke')
        throw new ToolFailure('handler_error', 'tool_invoke cannot call itself: name the tool to call.', 'tool_invoke of tool_invoke');
      const result = await context.invoke(params.name, params.arguments ?? {});
      // The invoked tool's own failure code (unknown_tool, invalid_arguments, …) is the answer's.
      if (result.error !== null && result.error.code !== 'tool_failed')
        throw new ToolFailure(result.error.code as HandlerFailureCode, result.message, result.error.detail);
      return { message: result.message, value: result.value, success: result.success };
    },
  };
  return [toolSearch as unknown as ToolDefinition, toolInvoke as unknown as ToolDefinition];
}
