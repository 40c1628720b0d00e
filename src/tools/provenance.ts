/**
 * Tool provenance (docs/formats.md): every definition the catalog serves is kept in the store under its
 * hash, so a transcript's `tool_hash` always resolves to the exact schema the model saw, even
 * after the tool changed. Recorded once at start; discovery waits for it (and retries it) so
 * nothing is served before it is kept.
 */
import type { Logger } from 'pino';
import type { Store, ToolPin } from '../store/types.ts';
import type { RegisteredTool } from './registry.ts';

/** What a tool's hash covers, and so what a hash resolves to: name, description, parameters, result. */
export interface HashedDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  result?: Record<string, unknown>;
}

export interface KeptDefinition {
  hash: string;
  first_served_at: string;
  definition: HashedDefinition;
}

export interface DefinitionVersion {
  hash: string;
  first_served_at: string;
  /** A pinned tool's changed upstream definition, not served until an admin accepts it (docs/mcp-sources.md). */
  pending?: true;
}

export function hashedDefinition(tool: Pick<RegisteredTool, 'name' | 'description' | 'parameters' | 'result'>): HashedDefinition {
  const definition: HashedDefinition = { name: tool.name, description: tool.description, parameters: tool.parameters };
  if (tool.result !== null) definition.result = tool.result;
  return definition;
}

export class Provenance {
  readonly #store: Store;
  readonly #catalog: { list(): readonly RegisteredTool[] };
  readonly #log: Logger;
  #recording: Promise<void> | null = null;
  readonly #acceptListeners: ((name: string) => void)[] = [];

  /** The catalog is read when first recorded, so it may still be filling when this is made. */
  constructor(store: Store, catalog: { list(): readonly RegisteredTool[] }, log: Logger) {
    this.#store = store;
    this.#catalog = catalog;
    this.#log = log;
  }

  /** Resolves once the catalog is kept; a failed attempt (store down) is retried by the next caller. */
  recorded(): Promise<void> {
    if (this.#recording === null) {
      this.#recording = this.record(this.#catalog.list()).catch((err: unknown) => {
        this.#recording = null;
        throw err;
      });
    }
    return this.#recording;
  }

  /** Keeps definitions that join the catalog at run time (an upstream changed), or are seen but not served yet. */
  record(tools: readonly Pick<RegisteredTool, 'name' | 'description' | 'parameters' | 'result' | 'hash'>[]): Promise<void> {
    const records = tools.map((tool) => ({ hash: tool.hash, name: tool.name, definition: JSON.stringify(hashedDefinition(tool)) }));
    return this.#store.recordDefinitions(records, Date.now());
  }

  /** Starts recording at start without failing the start: the store may come up later. */
  recordAtStart(): void {
    this.recorded().catch((err: unknown) =>
      this.#log.warn({ err: err instanceof Error ? err.message : String(err) }, 'tool definitions not recorded yet; discovery retries'),
    );
  }

  async definition(hash: string): Promise<KeptDefinition | null> {
    const kept = await this.#store.definitionByHash(hash);
    if (kept === null) return null;
    return { hash, first_served_at: new Date(kept.firstServedAt).toISOString(), definition: JSON.parse(kept.definition) as HashedDefinition };
  }

  /**
   * An admin accepts a pinned tool's definition: `hash` becomes its pin on every replica (the pin
   * is in the store; replicas serving the tool notice it). Null when the tool is not pinned or
   * never had that hash.
   */
  async accept(name: string, hash: string): Promise<ToolPin | null> {
    const [pin, versions] = await Promise.all([this.#store.toolPin(name), this.#store.definitionVersions(name)]);
    if (pin === null || !versions.some((v) => v.hash === hash)) return null;
    const accepted = await this.#store.pinAccept(name, hash);
    for (const listener of this.#acceptListeners) listener(name);
    return accepted;
  }

  /** Told when this replica accepted a pin (the replica's own sources refresh at once). */
  onAccepted(listener: (name: string) => void): void {
    this.#acceptListeners.push(listener);
  }

  async versions(name: string): Promise<DefinitionVersion[]> {
    const [versions, pin] = await Promise.all([this.#store.definitionVersions(name), this.#store.toolPin(name)]);
    return versions.map((v) => ({
      hash: v.hash,
      first_served_at: new Date(v.firstServedAt).toISOString(),
      ...(v.hash === pin?.pending && { pending: true as const }),
    }));
  }
}
