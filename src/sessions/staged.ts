/**
 * context.session: reads go to the store and remember the version they saw; writes are staged and
 * committed only if the handler succeeds, and only if nothing it read has changed since.
 */
import type { SessionStore } from '../store/owned-sessions.ts';
import type { SessionCommit } from '../store/types.ts';
import type { SessionHandle } from '../tools/types.ts';

const MAX_KEY_LENGTH = 256;

export class StagedSession implements SessionHandle {
  readonly id: string;
  /** The sessions of the call's caller (src/store/owned-sessions.ts). */
  readonly #store: SessionStore;
  /** The version of each key when it was first read from the store. */
  readonly #reads = new Map<string, number>();
  readonly #writes = new Map<string, string | null>();
  #open = true;

  constructor(store: SessionStore, id: string) {
    this.id = id;
    this.#store = store;
  }

  async get<T = unknown>(key: string): Promise<T | undefined> {
    return (await this.getMany<T>([key]))[0];
  }

  async getMany<T = unknown>(keys: readonly string[]): Promise<(T | undefined)[]> {
    if (!Array.isArray(keys)) throw new TypeError('getMany takes an array of keys');
    keys.forEach(checkKey);
    const texts = new Map<string, string | null>();
    const unstaged = keys.filter((key) => !this.#writes.has(key));
    if (unstaged.length > 0) {
      const read = await this.#store.sessionRead(this.id, unstaged);
      unstaged.forEach((key, i) => {
        texts.set(key, read.values[i] ?? null);
        if (!this.#reads.has(key)) this.#reads.set(key, read.versions[i] ?? 0);
      });
    }
    return keys.map((key) => {
      const text = this.#writes.has(key) ? this.#writes.get(key) : texts.get(key);
      return text === null || text === undefined ? undefined : (JSON.parse(text) as T);
    });
  }

  async set(key: string, value: unknown): Promise<void> {
    this.#assertOpen();
    checkKey(key);
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`session value for "${key}" has no JSON form`);
    this.#writes.set(key, text);
  }

  async delete(key: string): Promise<void> {
    this.#assertOpen();
    checkKey(key);
    this.#writes.set(key, null);
  }

  #assertOpen(): void {
    if (!this.#open) throw new Error('the call has ended: session writes are no longer accepted');
  }

  /** Ends staging: what was read and staged is what the commit checks and writes. */
  close(): Pick<SessionCommit, 'reads' | 'writes'> {
    this.#open = false;
    return { reads: this.#reads, writes: this.#writes };
  }
}

function checkKey(key: unknown): void {
  if (typeof key !== 'string' || key === '' || key.length > MAX_KEY_LENGTH) {
    throw new TypeError(`a session key must be a string of 1 to ${MAX_KEY_LENGTH} characters`);
  }
}
