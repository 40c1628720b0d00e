/** The memory store's large results (docs/large-results.md): expiry, and a bound on what one process holds. */
import { describe, expect, it } from 'vitest';
import { MemoryResults } from '../../src/store/memory/results.ts';
import type { KeptResult } from '../../src/store/results.ts';

const result = (id: string, chars: number, ttlMs = 60_000): KeptResult => ({
  id,
  caller: null,
  tool: 'read',
  callId: `call-${id}`,
  content: 'x'.repeat(chars),
  createdAt: Date.now(),
  expiresAt: Date.now() + ttlMs,
});

describe('the memory store keeping large results', () => {
  it('drops the oldest results once it holds more than its size, never the newest', async () => {
    const results = new MemoryResults(1000);
    await results.keep(result('a', 400));
    await results.keep(result('b', 400));
    expect(await results.read('a')).not.toBeNull();
    await results.keep(result('c', 400)); // 1,200 characters: a goes
    expect(await results.read('a')).toBeNull();
    expect((await results.read('b'))?.content).toHaveLength(400);
    await results.keep(result('d', 5000)); // larger than the whole size: kept alone
    expect(await results.read('b')).toBeNull();
    expect(await results.read('c')).toBeNull();
    expect((await results.read('d'))?.content).toHaveLength(5000);
    await results.keep(result('e', 10)); // d goes, e stays
    expect(await results.read('d')).toBeNull();
    expect(await results.read('e')).not.toBeNull();
  });

  it('counts what expired and what was kept again under the same id', async () => {
    const results = new MemoryResults(1000);
    await results.keep(result('old', 900, -1));
    results.prune();
    await results.keep(result('a', 900));
    expect(await results.read('a')).not.toBeNull(); // the expired 900 no longer count
    await results.keep(result('a', 900));
    await results.keep(result('b', 50));
    expect(await results.read('a')).not.toBeNull(); // a counted once: 950 in all
    expect(await results.read('b')).not.toBeNull();
  });
});
