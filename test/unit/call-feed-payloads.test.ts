/**
 * What the call feed keeps of a call on the memory store (docs/console.md): previews of large
 * arguments and results, never the objects themselves, and nothing built for a small call until
 * something reads it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { CallFeed } from '../../src/calls/feed.ts';
import { jsonMayExceed } from '../../src/json.ts';
import { MemoryCallLog } from '../../src/store/memory/calls.ts';
import type { FinishedCall } from '../../src/tools/invoke.ts';

/** A finished call as the pipeline reports it, with only what the feed reads. */
function finished(params: unknown, value: unknown, id: string): FinishedCall {
  return {
    at: Date.now(),
    known: true,
    params,
    ran: true,
    rule: null,
    result: { id, name: 'echo', success: true, message: 'ok', value, error: null, duration_ms: 1, replayed: false, idempotency_key: null },
    scope: { caller: { id: 'k' }, sinks: { sessionId: null }, options: { requestId: `r-${id}` } },
  } as unknown as FinishedCall;
}

describe('jsonMayExceed', () => {
  it('says whether JSON could pass the limit, counting strings, keys and members', () => {
    expect(jsonMayExceed({ text: 'hi' }, 4000)).toBe(false);
    expect(jsonMayExceed(null, 4000)).toBe(false);
    expect(jsonMayExceed({ text: 'x'.repeat(5000) }, 4000)).toBe(true);
    expect(jsonMayExceed({ ['k'.repeat(5000)]: 1 }, 4000)).toBe(true);
    expect(
      jsonMayExceed(
        Array.from({ length: 2000 }, () => 1),
        4000,
      ),
    ).toBe(true);
    expect(jsonMayExceed([[[[{ a: ['y'.repeat(3000), 'z'.repeat(3000)] }]]]], 4000)).toBe(true);
  });
});

describe('the call feed on the memory store', () => {
  it('keeps previews of large arguments and results, not the objects', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const log = new MemoryCallLog(500);
    const feed = new CallFeed(log, pino({ level: 'silent' }));
    // Made in a function of its own: an async function's saved registers could still hold the last one.
    const record = () => {
      const refs: WeakRef<object>[] = [];
      for (let i = 0; i < 20; i++) {
        const big = JSON.parse(`{"text":"${'x'.repeat(100_000)}${i}"}`) as object;
        const result = JSON.parse(`{"rows":["${'y'.repeat(100_000)}${i}"]}`) as object;
        refs.push(new WeakRef(big), new WeakRef(result));
        feed.observe(finished(i % 2 === 0 ? big : { small: i }, i % 2 === 0 ? { small: i } : result, `call-${i}`));
      }
      return refs;
    };
    const refs = record();
    await feed.flush();
    for (let i = 0; i < 5; i++) {
      await sleep(10);
      gc();
    }
    expect(refs.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    const newest = await feed.recent(20);
    expect(newest).toHaveLength(20);
    const bigArguments = newest.find((r) => r.entry().call_id === 'call-0')!.entry();
    expect(typeof bigArguments.arguments).toBe('string');
    expect(bigArguments.arguments as string).toMatch(/… \(cut: 1000\d\d characters\)$/);
    const bigResult = newest.find((r) => r.entry().call_id === 'call-1')!.entry();
    expect(bigResult.arguments).toEqual({ small: 1 });
    expect(bigResult.result as string).toMatch(/cut: \d+ characters\)$/);
    await feed.close();
  });
});
