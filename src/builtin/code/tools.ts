/**
 * Code mode's two tools (docs/code-mode.md): `code_api` answers the TypeScript declarations of the
 * tools the caller may call (the best matches of a query, by the catalog's search), and `code_run`
 * runs a program against them. code_run's description is everything the model is told.
 */
import { CallContext } from '../../tools/context.ts';
import { ok } from '../../tools/define.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { RegisteredTool, ToolRegistry } from '../../tools/registry.ts';
import type { ToolDefinition } from '../../tools/types.ts';
import { CODE_TOOLS, SEARCH_TOOLS } from '../../toolsets/index.ts';
import { MAX_LIMIT, MAX_QUERY_CHARS, type ToolSearch } from '../../toolsets/search.ts';
import { declarationOf, declarationsOf } from './declarations.ts';
import { runCode, type CodeLimits } from './run.ts';
import { setMaxWorkers, warmUp } from './runner.ts';

export interface CodeModeDeps {
  registry: ToolRegistry;
  search: ToolSearch;
  limits: CodeLimits;
}

const DEFAULT_LIMIT = 8;
/** The most declarations one answer without a query holds; the rest are counted, to be found by a query. */
const MAX_LISTED_CHARS = 60_000;
const MAX_CODE_CHARS = 100_000;

function callableBy(context: unknown): (tool: string) => boolean {
  const mayCall = context instanceof CallContext ? (tool: string) => context.mayCall(tool) : () => true;
  return (tool) => !CODE_TOOLS.includes(tool) && !SEARCH_TOOLS.includes(tool) && mayCall(tool);
}

/** The rules the model is told, with this service's limits. */
export function codeRunDescription(limits: CodeLimits): string {
  return [
    'Run a short JavaScript program that calls tools, to do in one step what would take many calls.',
    'Write the body of an async function: call a tool as `await tools.name(args)` (a name with a dash as `tools["repos_list-for-org"](args)`), with the arguments its declaration names;',
    'look the declarations up with code_api first. Combine calls (Promise.all), loop, filter, and `return` only what is needed, as JSON.',
    "A call resolves with the tool's value (its message when it has no value). A call that fails throws a ToolError with `code` and `message`: catch it to go on.",
    '`console.log` lines come back in `logs`. There is no require, import, fetch, file system, process or real timer (setTimeout does not wait).',
    `Limits: ${limits.maxCalls} tool calls, ${Math.round(limits.timeMs / 1000)} s for the whole run, ${limits.memoryMb} MB of memory, ${limits.maxOutputChars} characters of returned JSON.`,
    'If a call needs a person (approval_required, authorization_required) the run stops with that answer: once they decided, run the same program again unchanged; the calls that already succeeded are not repeated.',
  ].join(' ');
}

export function codeTools({ registry, search, limits }: CodeModeDeps): ToolDefinition[] {
  setMaxWorkers(limits.workers);
  warmUp();
  const codeApi: ToolDefinition<{ query?: string; limit?: number }> = {
    name: 'code_api',
    description:
      'The TypeScript declarations of the tools a code_run program can call as `tools.<name>(args)`: with a query, the best matches for it (describe the task in a few words); without one, every tool.',
    parameters: {
      type: 'object',
      properties: {
        query: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS, description: 'what the program must do, in plain words' },
        limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, description: `how many tools at most with a query (default ${DEFAULT_LIMIT})` },
      },
    },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: (params, context) => {
      const callable = callableBy(context);
      const tools =
        params.query === undefined
          ? registry.list().filter((t) => callable(t.name))
          : search.search(params.query, params.limit ?? DEFAULT_LIMIT, callable).map((hit) => hit.tool);
      const shown = params.query === undefined ? withinBudget(tools) : tools;
      const left = tools.length - shown.length;
      const more = left > 0 ? `\n// ${left} more tools: call code_api with a query to find the ones a task needs.\n` : '';
      const names = shown.map((t) => t.name);
      return ok({ tools: names, ...(left > 0 && { more: left }) }, tools.length === 0 ? 'No tool matches; try other words.' : declarationsOf(shown) + more);
    },
  };
  const codeRun: ToolDefinition<{ code: string }> = {
    name: 'code_run',
    description: codeRunDescription(limits),
    parameters: {
      type: 'object',
      properties: {
        code: { type: 'string', minLength: 1, maxLength: MAX_CODE_CHARS, description: 'the body of an async function; `return` its answer' },
      },
      required: ['code'],
    },
    // The run's own deadline ends it first, so its answer (logs, calls) still gets out.
    timeout_ms: limits.timeMs + 1000,
    handler: (params, context) => {
      if (!(context instanceof CallContext)) throw new ToolFailure('handler_error', 'code_run runs only inside toolport.', 'no call context');
      return runCode(params.code, context, limits);
    },
  };
  return [codeApi as unknown as ToolDefinition, codeRun as unknown as ToolDefinition];
}

function withinBudget(tools: readonly RegisteredTool[]): RegisteredTool[] {
  let chars = 0;
  const shown: RegisteredTool[] = [];
  for (const tool of tools) {
    chars += declarationOf(tool).length;
    if (chars > MAX_LISTED_CHARS) break;
    shown.push(tool);
  }
  return shown;
}
