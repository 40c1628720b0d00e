/** A provider format: how its tool calls come in, and how results and tool definitions go out. */
import type { ToolCall } from '../tools/invoke.ts';
import type { AnsweredResult } from '../tools/outcome.ts';
import type { RegisteredTool } from '../tools/registry.ts';

export interface ParsedCalls {
  calls: ToolCall[];
  /** A whole assistant turn (answered with results + messages) rather than one call. */
  turn: boolean;
}

/** `?tool_choice=`: let the model choose, forbid calls, require one, or require the named tool. */
export type ToolChoice = { mode: 'auto' | 'none' | 'required' } | { mode: 'tool'; name: string };

export interface Format {
  readonly name: string;
  /** The shapes this format accepts, as a 400 problem names them. */
  readonly shapes: string;
  /** Whether the body has this format's shape; never throws. */
  detect(body: unknown): boolean;
  /** The calls in a body that `detect` accepted; throws NoToolCall when a part is malformed. */
  parse(body: unknown): ParsedCalls;
  /** The result as this provider appends it; `call` is the parsed call (its id is null when the model gave none). */
  toolMessage(result: AnsweredResult, call?: ToolCall): unknown;
  turnMessages(results: readonly AnsweredResult[], calls?: readonly ToolCall[]): unknown[];
  /** A tool definition as this provider's API takes it. */
  renderTool(tool: RegisteredTool): unknown;
  /** The `tools` list of GET /tools, when the provider groups definitions (Gemini); else the definitions as they are. */
  renderToolList?(definitions: unknown[]): unknown[];
  /** The provider's own `tool_choice` value; absent when the provider has no such setting. */
  renderToolChoice?(choice: ToolChoice): unknown;
}
