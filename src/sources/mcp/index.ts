/**
 * The `mcp:` section of TOOLS_FILE (SPEC §10): every tool of an MCP server, over stdio or
 * Streamable HTTP. Called by src/sources/index.ts with the section's entries: variables expanded,
 * each already checked to be a mapping with a valid, unique `source` and exactly one of `command`
 * or `url` (every other field is this module's to check, with EntryReader).
 */
import { ToolsFileError, type RawEntry } from '../entry.ts';
import type { SourceContext } from '../types.ts';

export async function registerMcpSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  const first = entries[0];
  if (first === undefined) return;
  throw new ToolsFileError(`TOOLS_FILE ${context.file.path}: ${first.where}: MCP servers are not supported yet`);
}
