/** What every tool source kind is handed: the catalog to register into, the file, and a way to clean up. */
import type { Logger } from 'pino';
import type { ToolRegistry } from '../tools/registry.ts';
import type { RawEntry } from './entry.ts';
import type { ToolsFile } from './tools-file.ts';

export interface SourceContext {
  readonly registry: ToolRegistry;
  readonly file: ToolsFile;
  readonly log: Logger;
  /** Runs when the app closes, in reverse order of registration: pools, child processes, timers. */
  onClose(close: () => Promise<void>): void;
}

/**
 * One kind of source: turns its section's entries into ordinary registered tools whose handler
 * forwards the call. Registered through `context.registry.withSource(…)`, so a clash of names
 * stops the start naming both sources.
 */
export type SourceKind = (entries: readonly RawEntry[], context: SourceContext) => Promise<void>;
