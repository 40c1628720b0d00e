/** A provider format: how its tool calls come in, and how results and tool definitions go out. */
import type { ToolCall } from '../tools/invoke.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';

export interface ParsedCalls {
  calls: ToolCall[];
  /** A whole assistant turn (answered with results + messages) rather than one call. */
  turn: boolean;
}

export interface Format {
  readonly name: string;
  /** Whether the body has this format's shape; never throws. */
  detect(body: unknown): boolean;
  /** The calls in a body that `detect` accepted; throws NoToolCall when a part is malformed. */
  parse(body: unknown): ParsedCalls;
  toolMessage(result: InvocationResult): unknown;
  turnMessages(results: readonly InvocationResult[]): unknown[];
  /** A tool definition as this provider's API takes it. */
  renderTool(tool: RegisteredTool): unknown;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
