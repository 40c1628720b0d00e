/**
 * Verified access tokens, remembered briefly: an agent sends the same token with every call, and
 * verifying its signature costs far more than the rest of a request. An entry lives until the
 * token's `exp` and at most MAX_AGE_MS (so a key the issuer withdraws stops counting about as soon
 * as jose would refetch the JWKS anyway); only successes are kept, under the token's SHA-256, and
 * the oldest entry goes first when the cache is full.
 */
import { createHash } from 'node:crypto';
import type { VerifiedUser } from './access.ts';

const MAX_AGE_MS = 60_000;
const MAX_ENTRIES = 10_000;

export class VerifiedTokens {
  readonly #entries = new Map<string, { user: VerifiedUser; until: number }>();

  static keyOf(token: string): string {
    return createHash('sha256').update(token).digest('base64url');
  }

  /** The user a token verified as, while its entry lasts; null otherwise. */
  get(key: string, now = Date.now()): VerifiedUser | null {
    const entry = this.#entries.get(key);
    if (entry === undefined) return null;
    if (now < entry.until) return entry.user;
    this.#entries.delete(key);
    return null;
  }

  /** Keeps a verified token until its `exp` (seconds) and at most MAX_AGE_MS. */
  set(key: string, user: VerifiedUser, exp: number, now = Date.now()): void {
    const until = Math.min(exp * 1000, now + MAX_AGE_MS);
    if (until <= now) return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { user, until });
  }
}
