/** Progress reports are thinned before they reach the wire. */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ProgressThrottle, type ProgressReport } from '../../src/tools/progress.ts';

describe('ProgressThrottle', () => {
  // The throttle's clock is faked: the test moves time itself instead of sleeping and hoping.
  beforeEach(() => vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }));
  afterEach(() => vi.useRealTimers());

  it('sends the first report at once and drops values that do not increase or are not numbers', () => {
    const sent: ProgressReport[] = [];
    const throttle = new ProgressThrottle((r) => sent.push(r), 0);
    throttle.report(1, 10);
    throttle.report(1, 10);
    throttle.report(0.5, 10);
    throttle.report(Number.NaN, 10);
    throttle.report(2, Number.POSITIVE_INFINITY);
    expect(sent).toEqual([
      { done: 1, total: 10 },
      { done: 2, total: undefined },
    ]);
  });

  it('sends at most one report per interval, the latest one, and flushes the held-back one', async () => {
    const sent: ProgressReport[] = [];
    const throttle = new ProgressThrottle((r) => sent.push(r), 50);
    for (let i = 1; i <= 5; i++) throttle.report(i, 5);
    expect(sent.map((r) => r.done)).toEqual([1]);
    vi.advanceTimersByTime(49);
    expect(sent.map((r) => r.done)).toEqual([1]);
    vi.advanceTimersByTime(1);
    expect(sent.map((r) => r.done)).toEqual([1, 5]); // 2–4 were superseded
    throttle.report(6, 7);
    throttle.flush();
    expect(sent.map((r) => r.done)).toEqual([1, 5, 6]);
  });

  it('sends nothing after close', async () => {
    const sent: ProgressReport[] = [];
    const throttle = new ProgressThrottle((r) => sent.push(r), 30);
    throttle.report(1, undefined);
    throttle.report(2, undefined);
    throttle.close();
    throttle.report(3, undefined);
    throttle.flush();
    vi.advanceTimersByTime(1000);
    expect(sent.map((r) => r.done)).toEqual([1]);
  });
});
