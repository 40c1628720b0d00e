/**
 * The public surface for plugin authors: `import { defineTool, ok, error } from 'toolport'`.
 * The package ships it compiled (dist/, built by `npm run build` before packing) with its
 * declarations; nothing here loads the service itself.
 */
export { defineTool, ok, error } from './tools/define.ts';
export { defineResource, defineResourceTemplate, definePrompt } from './tools/entry-definitions.ts';
export type {
  ResourceDefinition,
  ResourceTemplateDefinition,
  PromptDefinition,
  EntryDefinition,
  EntryContext,
  Completions,
  ReadReturn,
  PromptArgument,
  PromptResult,
  ResourceContents,
} from './tools/entry-definitions.ts';
export { defineGuardrail } from './tools/guardrail.ts';
export type { GuardrailDefinition, GuardrailVerdict, GuardrailCall, GuardrailOutput } from './tools/guardrail.ts';
export type {
  ToolDefinition,
  ToolResult,
  ToolContext,
  HandlerReturn,
  SessionHandle,
  Resources,
  PluginRegistry,
  PluginExport,
  IdempotencyConfig,
  ToolAnnotations,
  ToolExample,
  NestedResult,
  JsonSchema,
} from './tools/types.ts';
export type { ResultAnswer as InvocationResult, ToolError, ErrorCode, GuardrailAction } from './tools/outcome.ts';
export type { Config } from './config.ts';
