/**
 * Every session belongs to the caller that wrote it (docs/identity.md): each caller (an API key, a user)
 * has its own space of session ids, so the same id named by another caller is another, empty
 * session, and one found by guessing or a leak is worthless. This is the one place that applies it:
 * whatever reads or writes a session goes through `ownedSessions`. Without auth there is no owner
 * and the ids are the store's own, as before.
 */
import type { Store } from './types.ts';

export type SessionStore = Pick<Store, 'sessionRead' | 'commitSession' | 'sessionEvents' | 'deleteSession'>;

/** The store's name of a caller's session: owner and id, the owner encoded so no `{`, `}` or `/` of a user's subject leaks into a key. */
export function ownedSessionId(owner: string | null, id: string): string {
  return owner === null ? id : `${encodeURIComponent(owner)}/${id}`;
}

class OwnedSessions implements SessionStore {
  readonly #store: SessionStore;
  readonly #owner: string;

  constructor(store: SessionStore, owner: string) {
    this.#store = store;
    this.#owner = owner;
  }

  sessionRead(id: string, keys: readonly string[]): ReturnType<Store['sessionRead']> {
    return this.#store.sessionRead(ownedSessionId(this.#owner, id), keys);
  }

  commitSession(id: string, commit: Parameters<Store['commitSession']>[1]): Promise<boolean> {
    return this.#store.commitSession(ownedSessionId(this.#owner, id), commit);
  }

  sessionEvents(id: string, after: number | 'newest', limit: number): ReturnType<Store['sessionEvents']> {
    return this.#store.sessionEvents(ownedSessionId(this.#owner, id), after, limit);
  }

  deleteSession(id: string): Promise<boolean> {
    return this.#store.deleteSession(ownedSessionId(this.#owner, id));
  }
}

/** The sessions `owner` sees (null: no auth, every session). */
export function ownedSessions(store: SessionStore, owner: string | null): SessionStore {
  return owner === null ? store : new OwnedSessions(store, owner);
}
