/**
 * The `plugins:` section of TOOLS_FILE: as TOOL_PLUGINS, with paths and packages resolved from the
 * file's folder. An entry is a module, or `{module, isolation}` to run its tools' handlers in workers.
 */
import { ISOLATIONS, loadPlugin } from '../tools/plugins.ts';
import type { Isolation } from '../tools/types.ts';
import { EntryReader, type RawEntry } from './entry.ts';
import type { SourceContext } from './types.ts';
import { ToolsFileError } from '../errors.ts';

function readEntry(entry: RawEntry, file: string): { module: string; isolation?: Isolation } {
  if (typeof entry.value === 'string' && entry.value.trim() !== '') return { module: entry.value.trim() };
  if (typeof entry.value !== 'object' || entry.value === null) {
    throw new ToolsFileError(`TOOLS_FILE ${file}: ${entry.where}: must be a module path or a package name, or {module, isolation}`);
  }
  const reader = new EntryReader(file, entry, ['module', 'isolation']);
  const module = reader.string('module').trim();
  const isolation = reader.optionalString('isolation');
  if (isolation !== undefined && !ISOLATIONS.includes(isolation as Isolation)) reader.fail(`isolation must be ${ISOLATIONS.join(' or ')}`);
  return isolation === undefined ? { module } : { module, isolation: isolation as Isolation };
}

export async function registerPluginSources(entries: readonly RawEntry[], context: SourceContext): Promise<void> {
  for (const entry of entries) {
    const { module, isolation } = readEntry(entry, context.file.path);
    const options = { ...context.plugins, ...(isolation !== undefined && { isolation }) };
    await loadPlugin(context.registry, module, context.file.folder, options);
  }
}
