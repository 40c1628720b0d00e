/** The `plugins:` section of TOOLS_FILE: as TOOL_PLUGINS, with paths and packages resolved from the file's folder. */
import { loadPlugin } from '../tools/plugins.ts';
import { type RawEntry } from './entry.ts';
import type { SourceContext } from './types.ts';
import { ToolsFileError } from '../errors.ts';

export async function registerPluginSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  for (const entry of entries) {
    if (typeof entry.value !== 'string' || entry.value.trim() === '') {
      throw new ToolsFileError(`TOOLS_FILE ${context.file.path}: ${entry.where}: must be a module path or a package name`);
    }
    await loadPlugin(context.registry, entry.value.trim(), context.file.folder);
  }
}
