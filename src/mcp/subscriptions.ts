/**
 * `resources/subscribe` and `notifications/resources/updated` (handshake era). A session's
 * subscriptions are kept in the store (any replica may take the subscribe); a client that opens
 * the session's stream (GET /mcp with its Mcp-Session-Id) on a replica hears there of every change
 * to a resource it subscribed to, as that replica's resources report them (`watch`).
 */
import { createHash } from 'node:crypto';
import type { McpClientStore } from '../store/mcp-clients.ts';
import type { EntryCatalog } from '../tools/entries.ts';

/** At most this many subscriptions per session are kept. */
const MAX_PER_SESSION = 100;

/** Where a session's notifications are written (an SSE reply). */
export interface EventSink {
  event(name: string, data: unknown): void;
  end(): void;
}

interface OpenStream {
  caller: string | null;
  session: string;
  sink: EventSink;
}

export class McpSubscriptions {
  readonly #store: McpClientStore;
  readonly #entries: EntryCatalog;
  readonly #ttlMs: number;
  readonly #streams = new Set<OpenStream>();
  readonly #watched = new Map<string, () => void>();
  #watchedVersion = -1;

  constructor(store: McpClientStore, entries: EntryCatalog, sessionTtlMs: number) {
    this.#store = store;
    this.#entries = entries;
    this.#ttlMs = sessionTtlMs;
  }

  static #key(caller: string | null, session: string): string {
    return `subs:${createHash('sha256')
      .update(`${caller ?? ''}\n${session}`)
      .digest('base64url')}`;
  }

  async #subscribed(caller: string | null, session: string): Promise<string[]> {
    const json = await this.#store.recall(McpSubscriptions.#key(caller, session));
    return json === null ? [] : (JSON.parse(json) as string[]);
  }

  /** Subscribes (`on`) or unsubscribes the session to `uri`. */
  async change(caller: string | null, session: string, uri: string, on: boolean): Promise<void> {
    this.#watch();
    const uris = new Set(await this.#subscribed(caller, session));
    if (on) uris.add(uri);
    else uris.delete(uri);
    await this.#store.remember(McpSubscriptions.#key(caller, session), JSON.stringify([...uris].slice(-MAX_PER_SESSION)), this.#ttlMs);
  }

  /** A session's stream on this replica; answers the function that forgets it (the client went away). */
  open(caller: string | null, session: string, sink: EventSink): () => void {
    this.#watch();
    const stream = { caller, session, sink };
    this.#streams.add(stream);
    return () => this.#streams.delete(stream);
  }

  /** Ends every open stream (the app closes). */
  close(): void {
    for (const stream of this.#streams) stream.sink.end();
    this.#streams.clear();
    for (const stop of this.#watched.values()) stop();
    this.#watched.clear();
  }

  /** Watches every resource that can report changes, once (again when the catalog changed). */
  #watch(): void {
    if (this.#watchedVersion === this.#entries.version) return;
    this.#watchedVersion = this.#entries.version;
    for (const resource of this.#entries.list('resource', null)) {
      if (resource.watch === undefined || this.#watched.has(resource.uri)) continue;
      this.#watched.set(
        resource.uri,
        resource.watch(() => void this.#changed(resource.uri)),
      );
    }
  }

  async #changed(uri: string): Promise<void> {
    for (const stream of this.#streams) {
      const uris: string[] = await this.#subscribed(stream.caller, stream.session).catch(() => []);
      if (uris.includes(uri)) stream.sink.event('message', { jsonrpc: '2.0', method: 'notifications/resources/updated', params: { uri } });
    }
  }
}
