/** An upstream's guards on their own: the rate buckets' arithmetic, and the breaker's edges the integration tests do not reach. */
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { UpstreamGuard } from '../../src/sources/upstream/guard.ts';
import { CallHealth } from '../../src/sources/upstream/health.ts';
import { DEFAULT_GUARD } from '../../src/sources/upstream/limits.ts';
import { RateLimit } from '../../src/sources/upstream/rate.ts';
import { ToolFailure } from '../../src/tools/failure.ts';
import type { ToolContext } from '../../src/tools/types.ts';

const silent = pino({ level: 'silent' });
const context = (signal = new AbortController().signal, deadline = Date.now() + 10_000) => ({ signal, deadline, caller: null }) as unknown as ToolContext;
const unavailable = () => Promise.reject(new ToolFailure('upstream_unavailable', 'down', 'HTTP 503'));
const answered = () => Promise.resolve({ message: 'ok' });

async function codeOf(guard: UpstreamGuard, forward: () => Promise<unknown>, ctx = context()): Promise<string | null> {
  try {
    await guard.run(ctx, forward);
    return null;
  } catch (err) {
    return err instanceof ToolFailure ? `${err.code}: ${err.detail}` : String(err);
  }
}

describe('RateLimit', () => {
  it('lets the whole rate through after a quiet minute, then one call every 60/rate seconds', () => {
    const start = Date.now();
    const rate = new RateLimit(6, false);
    for (let i = 0; i < 6; i++) expect(rate.take('', start)).toBe(0);
    expect(rate.take('', start)).toBe(10);
    expect(rate.take('', start + 9_000)).toBe(1);
    expect(rate.take('', start + 10_000)).toBe(0);
    expect(rate.take('', start + 10_000)).toBe(10);
  });

  it('keeps one bucket per caller, and a token given back is there again', () => {
    const now = Date.now();
    const rate = new RateLimit(1, true);
    expect(rate.take('a', now)).toBe(0);
    expect(rate.take('a', now)).toBe(60);
    expect(rate.take('b', now)).toBe(0);
    rate.giveBack('a');
    expect(rate.take('a', now)).toBe(0);
  });
});

describe('UpstreamGuard', () => {
  it('lets the next call probe when the probe was cancelled (it says nothing of the upstream)', async () => {
    const guard = new UpstreamGuard('http://x', 'its endpoint', { ...DEFAULT_GUARD, failures: 2, openMs: 50 }, new CallHealth(), silent);
    await codeOf(guard, unavailable);
    await codeOf(guard, unavailable);
    expect(guard.view()).toMatchObject({ breaker: 'open', failures_in_row: 2, opened: 1, retry_after_s: 1 });
    await new Promise((resolve) => setTimeout(resolve, 60));
    const cancelled = new AbortController();
    cancelled.abort(new Error('the caller went away'));
    expect(await codeOf(guard, () => Promise.reject(new Error('aborted')), context(cancelled.signal))).toBe('Error: aborted');
    expect(guard.view().breaker).toBe('half_open');
    expect(await codeOf(guard, answered)).toBeNull();
    expect(guard.view()).toMatchObject({ breaker: 'closed', failures_in_row: 0, opened: 1 });
  });

  it('answers at once while a probe is under way, and never opens with breaker: false', async () => {
    const guard = new UpstreamGuard('http://x', 'its endpoint', { ...DEFAULT_GUARD, failures: 1, openMs: 1 }, new CallHealth(), silent);
    await codeOf(guard, unavailable);
    await new Promise((resolve) => setTimeout(resolve, 5));
    let answer!: (value: unknown) => void;
    const probe = codeOf(guard, () => new Promise((resolve) => (answer = resolve)));
    expect(await codeOf(guard, answered)).toBe('upstream_unavailable: circuit breaker open for http://x (a probe call is under way)');
    answer({ message: 'ok' });
    expect(await probe).toBeNull();

    const off = new UpstreamGuard('http://x', 'its endpoint', { ...DEFAULT_GUARD, failures: null }, new CallHealth(), silent);
    for (let i = 0; i < 10; i++) await codeOf(off, unavailable);
    expect(off.view()).toMatchObject({ breaker: 'closed', failures_in_row: 10, opened: 0, limits: { failures: null } });
  });
});
