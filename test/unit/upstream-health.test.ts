/** An upstream's health from its latest calls: unknown, up, degraded, down, and what is not counted. */
import { describe, expect, it } from 'vitest';
import { ToolFailure } from '../../src/tools/failure.ts';
import type { ToolContext } from '../../src/tools/types.ts';
import { CallHealth } from '../../src/sources/upstream/health.ts';

const context = (signal = new AbortController().signal, deadline = Date.now() + 10_000) => ({ signal, deadline }) as unknown as ToolContext;
const unavailable = () => Promise.reject(new ToolFailure('upstream_unavailable', 'down', 'HTTP 503'));
const answered = () => Promise.resolve({ message: 'ok' });

async function run(health: CallHealth, forward: () => Promise<unknown>, ctx = context()) {
  await health.watch(ctx, forward).catch(() => undefined);
}

describe('CallHealth', () => {
  it('is unknown before any call, up after answers, degraded after a failure among answers', async () => {
    const health = new CallHealth();
    expect(health.view()).toEqual({ state: 'unknown', calls: 0, failures: 0, last_error: null });
    await run(health, answered);
    expect(health.view().state).toBe('up');
    await run(health, unavailable);
    await run(health, answered);
    expect(health.view()).toMatchObject({ state: 'degraded', calls: 3, failures: 1, last_error: { code: 'upstream_unavailable', detail: 'HTTP 503' } });
  });

  it('is down after three failures in a row, and up again once 20 answers have pushed the failures out', async () => {
    const health = new CallHealth();
    await run(health, answered);
    for (let i = 0; i < 3; i++) await run(health, unavailable);
    expect(health.view().state).toBe('down');
    for (let i = 0; i < 19; i++) await run(health, answered);
    expect(health.view().state).toBe('degraded');
    await run(health, answered);
    expect(health.view()).toMatchObject({ state: 'up', calls: 20, failures: 0 });
    expect(health.view().last_error?.detail).toBe('HTTP 503');
  });

  it('counts a refusal as an answer, a cancelled call as nothing, and a call past its deadline as a failure', async () => {
    const health = new CallHealth();
    await run(health, () => Promise.reject(new ToolFailure('upstream_rejected', 'no', 'HTTP 404')));
    expect(health.view()).toMatchObject({ state: 'up', calls: 1 });
    const cancelled = new AbortController();
    cancelled.abort();
    await run(health, unavailable, context(cancelled.signal));
    expect(health.view().calls).toBe(1);
    await run(health, unavailable, context(cancelled.signal, Date.now() - 1));
    expect(health.view()).toMatchObject({ calls: 2, failures: 1, last_error: { code: 'deadline_exceeded' } });
  });
});
