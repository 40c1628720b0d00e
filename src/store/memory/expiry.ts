/** Expiry in the memory store: an entry past its time is dropped when read, as Redis drops a key past its TTL. */

/** The entry under `key`, or undefined when there is none or it has expired (then it is removed from `map`). */
export function liveEntry<E>(map: Map<string, E>, key: string, expiresAt: (entry: E) => number, now = Date.now()): E | undefined {
  const entry = map.get(key);
  if (entry !== undefined && expiresAt(entry) <= now) {
    map.delete(key);
    return undefined;
  }
  return entry;
}
