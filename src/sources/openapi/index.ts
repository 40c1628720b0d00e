/** The `openapi:` section of TOOLS_FILE (SPEC §10): one tool per included operation of an OpenAPI 3.0/3.1 document. */
import { ToolsFileError, type RawEntry } from '../entry.ts';
import type { SourceContext } from '../types.ts';

export async function registerOpenApiSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  const first = entries[0];
  if (first === undefined) return;
  throw new ToolsFileError(`TOOLS_FILE ${context.file.path}: ${first.where}: OpenAPI sources are not supported yet`);
}
