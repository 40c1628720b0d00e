/** The kind of a registered tool's source, read from the label its loader gives it. */

export type SourceKind = 'builtin' | 'plugin' | 'http' | 'openapi' | 'mcp';

/** `built-in …` → builtin; `TOOLS_FILE <file>: mcp[0] "name"` → mcp (http, openapi alike); a plugin's module → plugin. */
export function sourceKind(source: string): SourceKind {
  if (source.startsWith('built-in')) return 'builtin';
  const section = /^TOOLS_FILE .*?: (http|openapi|mcp)\[\d+\]/.exec(source)?.[1];
  return (section as SourceKind | undefined) ?? 'plugin';
}
