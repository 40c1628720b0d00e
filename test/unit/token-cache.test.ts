/** Verified tokens remembered briefly (src/callers/token-cache.ts): never past `exp`, never more than a minute, bounded. */
import { describe, expect, it } from 'vitest';
import type { VerifiedUser } from '../../src/callers/access.ts';
import { VerifiedTokens } from '../../src/callers/token-cache.ts';

const user = (sub: string): VerifiedUser => ({ sub, groups: [], scopes: [], claims: { sub } });
const NOW = 1_800_000_000_000;

describe('verified tokens', () => {
  it('answers a token verified before until its exp, and not after', () => {
    const cache = new VerifiedTokens();
    const key = VerifiedTokens.keyOf('a.b.c');
    cache.set(key, user('alice'), NOW / 1000 + 30, NOW);
    expect(cache.get(key, NOW + 29_999)?.sub).toBe('alice');
    expect(cache.get(key, NOW + 30_000)).toBeNull();
  });

  it('keeps a long-lived token one minute at most, and an expired one not at all', () => {
    const cache = new VerifiedTokens();
    cache.set('long', user('bob'), NOW / 1000 + 3600, NOW);
    expect(cache.get('long', NOW + 59_999)?.sub).toBe('bob');
    expect(cache.get('long', NOW + 60_000)).toBeNull();
    cache.set('late', user('carol'), NOW / 1000 - 1, NOW);
    expect(cache.get('late', NOW)).toBeNull();
  });

  it('keys by the SHA-256 of the token, never the token itself', () => {
    const key = VerifiedTokens.keyOf('header.payload.signature');
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(key).not.toContain('signature');
  });

  it('drops the oldest entry when full', () => {
    const cache = new VerifiedTokens();
    for (let i = 0; i <= 10_000; i++) cache.set(`k${i}`, user(`u${i}`), NOW / 1000 + 30, NOW);
    expect(cache.get('k0', NOW)).toBeNull();
    expect(cache.get('k1', NOW)?.sub).toBe('u1');
    expect(cache.get('k10000', NOW)?.sub).toBe('u10000');
  });
});
