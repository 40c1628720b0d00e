/** context.session: reads go to the store, writes are staged and committed only if the handler succeeds. */
import type { Store } from '../store/types.ts';
import type { SessionHandle } from '../tools/types.ts';

export class StagedSession implements SessionHandle {
  readonly id: string;
  readonly #store: Store;
  readonly #writes = new Map<string, string>();
  #open = true;

  constructor(store: Store, id: string) {
    this.id = id;
    this.#store = store;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    const text = this.#writes.get(key) ?? (await this.#store.sessionGet(this.id, key));
    return text === null ? undefined : (JSON.parse(text) as T);
  }

  async set(key: string, value: unknown): Promise<void> {
    if (!this.#open) throw new Error('the call has ended: session writes are no longer accepted');
    if (typeof key !== 'string' || key === '') throw new TypeError('a session key must be a non-empty string');
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`session value for "${key}" has no JSON form`);
    this.#writes.set(key, text);
  }

  /** Ends staging; what was staged is what the commit may write. */
  close(): ReadonlyMap<string, string> {
    this.#open = false;
    return this.#writes;
  }
}
