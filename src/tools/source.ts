/**
 * Where a catalog entry (a tool, a resource, a prompt) comes from, given by whoever registers it:
 * its kind, the name GET /sources and policy rules know it by, and the label start errors and
 * `GET /tools?fields=source` show.
 */

export type SourceKind = 'builtin' | 'plugin' | 'http' | 'openapi' | 'mcp';

export const SOURCE_KINDS: readonly SourceKind[] = ['builtin', 'plugin', 'http', 'openapi', 'mcp'];

export interface ToolSource {
  readonly kind: SourceKind;
  /** `built-in`, `http`, a plugin as TOOL_PLUGINS or the tools file names it, an OpenAPI source's or MCP server's name. */
  readonly name: string;
  /** What start errors name: `built-in planning tools`, a plugin's module, `TOOLS_FILE <file>: mcp[0] "files"`. */
  readonly label: string;
}

/** A group of built-in tools (`planning tools`). */
export function builtinSource(group: string): ToolSource {
  return Object.freeze({ kind: 'builtin', name: 'built-in', label: `built-in ${group}` });
}

/** A plugin module as it was named; an absolute path is known by its file's name only. */
export function pluginSource(entry: string): ToolSource {
  const absolute = entry.startsWith('/') || /^[A-Za-z]:[\\/]/.test(entry);
  return Object.freeze({ kind: 'plugin', name: absolute ? (entry.split(/[\\/]/).pop() ?? entry) : entry, label: entry });
}

/** An entry of the tools file: `kind` and `name` as GET /sources shows them, `label` where it was read. */
export function fileSource(kind: 'http' | 'openapi' | 'mcp', name: string, label: string): ToolSource {
  return Object.freeze({ kind, name, label });
}

/** Whether two registrations come from the same source: the one whose tools may replace each other. */
export function sameSource(a: ToolSource, b: ToolSource): boolean {
  return a.label === b.label;
}
