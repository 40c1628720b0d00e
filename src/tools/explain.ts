/** The message and detail of each tool-level failure, worded for the model that made the call. */
import type { RegisteredTool } from './registry.ts';
import { violations } from './schema.ts';

const MAX_NAMES_LISTED = 50;
const MAX_SCHEMA_CHARS = 4000;

export const explain = {
  unknownTool(name: string, available: readonly string[]): [string, string] {
    const shown = available.slice(0, MAX_NAMES_LISTED).join(', ');
    const more = available.length > MAX_NAMES_LISTED ? ` and ${available.length - MAX_NAMES_LISTED} more` : '';
    const list = available.length === 0 ? 'No tools are available.' : `Tools you can call: ${shown}${more}.`;
    const printable = name.length > 64 ? `${name.slice(0, 64)}…` : name;
    return [`Unknown tool "${printable}". ${list}`, `no tool named "${printable}"`];
  },
  notJson(tool: RegisteredTool, reason: string): [string, string] {
    return [
      `The arguments for tool "${tool.name}" are not valid JSON (${reason}). Send a JSON object.\nExpected arguments (JSON Schema): ${schemaText(tool)}`,
      `arguments are not valid JSON: ${reason}`,
    ];
  },
  invalid(tool: RegisteredTool): [string, string] {
    const lines = violations(tool.validateParams.errors);
    return [
      `Invalid arguments for tool "${tool.name}":\n${lines.map((l) => `- ${l}`).join('\n')}\nExpected arguments (JSON Schema): ${schemaText(tool)}`,
      lines.join('; '),
    ];
  },
  handlerError(tool: RegisteredTool, reason: string): [string, string] {
    return [`Tool "${tool.name}" failed: ${reason}. Check the arguments and try again, or take another approach.`, reason];
  },
  deadline(tool: RegisteredTool, budgetMs: number): [string, string] {
    return [
      `Tool "${tool.name}" did not finish within its time limit of ${budgetMs} ms and was stopped. Try again later or with a smaller request.`,
      `no result within ${budgetMs} ms`,
    ];
  },
  resultInvalid(tool: RegisteredTool, reason: string): [string, string] {
    return [
      `Tool "${tool.name}" misbehaved: it produced a result that breaks its own contract. This is not caused by your arguments; do not rely on this tool for now.`,
      reason,
    ];
  },
  sessionContended(tool: RegisteredTool, attempts: number): [string, string] {
    return [
      `Tool "${tool.name}" could not save its change: other calls kept changing the same session state (${attempts} attempts). Nothing was changed; try the call again.`,
      `session write conflicted ${attempts} times`,
    ];
  },
  stalled(tool: RegisteredTool, heartbeatMs: number): [string, string] {
    return [
      `Tool "${tool.name}" stopped making progress (no sign of life for ${heartbeatMs} ms) and was stopped. Try again later.`,
      `no heartbeat within ${heartbeatMs} ms: aborted as stuck`,
    ];
  },
  outcomeUnknown(tool: RegisteredTool, lost: { effect_id: string; lost_at: string }): [string, string] {
    return [
      `An identical call to tool "${tool.name}" started at ${lost.lost_at} and was lost before its result was recorded, so it may or may not have taken effect. It was not run again. Do not retry: an operator must decide whether it ran (effect ${lost.effect_id}).`,
      `the ledger lease of effect ${lost.effect_id} lapsed without a record; resolve it with POST /ledger/effects/{key}/resolve`,
    ];
  },
  cancelled(tool: RegisteredTool): [string, string] {
    return [`The call to tool "${tool.name}" was cancelled by the caller.`, 'cancelled by the caller'];
  },
};

function schemaText(tool: RegisteredTool): string {
  const text = JSON.stringify(tool.parameters);
  return text.length > MAX_SCHEMA_CHARS ? `${text.slice(0, MAX_SCHEMA_CHARS)}…` : text;
}
