import { describe, expect, it } from 'vitest';
import { Histogram, Registry } from 'prom-client';
import { Metrics } from '../../src/metrics.ts';

/** The value of one sample line of a Prometheus text exposition. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('metrics, exposed by prom-client (the per-call series counted outside it)', () => {
  it('exposes the call histogram exactly as a prom-client Histogram with the same observations would', async () => {
    const metrics = new Metrics();
    const reference = new Registry();
    const histogram = new Histogram({
      name: 'toolport_tool_call_duration_seconds',
      help: 'Time from receiving a call to its result, by tool',
      labelNames: ['tool'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [reference],
    });
    // Bounds are inclusive (le): 1 ms lands in the 0.001 bucket; 40 s is only in +Inf.
    for (const ms of [0.2, 1, 1.0001, 7, 250, 40_000]) {
      metrics.called('echo', 'success', ms);
      histogram.observe({ tool: 'echo' }, ms / 1000);
    }
    const ours = (await metrics.registry.metrics()).split('\n').filter((l) => l.startsWith('toolport_tool_call_duration_seconds'));
    const theirs = (await reference.metrics()).split('\n').filter((l) => l.startsWith('toolport_tool_call_duration_seconds'));
    expect(ours).toEqual(theirs);
    expect(ours.length).toBeGreaterThan(16);
  });

  it('counts calls by tool and outcome, ledger lookups and conflicts', async () => {
    const metrics = new Metrics();
    metrics.called('a', 'success', 1);
    metrics.called('a', 'success', 1);
    metrics.called('a', 'tool_failed', 1);
    metrics.ledgerLookup('hit');
    metrics.ledgerLookup('hit');
    metrics.sessionConflict('a');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'toolport_tool_calls_total{tool="a",outcome="success"}')).toBe(2);
    expect(sample(text, 'toolport_tool_calls_total{tool="a",outcome="tool_failed"}')).toBe(1);
    expect(sample(text, 'toolport_ledger_lookups_total{result="hit"}')).toBe(2);
    expect(sample(text, 'toolport_session_commit_conflicts_total{tool="a"}')).toBe(1);
    expect(text).toMatch(/^# TYPE toolport_tool_calls_total counter$/m);
  });

  it('keeps counter names right in the OpenMetrics exposition', async () => {
    const metrics = new Metrics();
    metrics.called('a', 'success', 1);
    (metrics.registry as unknown as Registry<typeof Registry.OPENMETRICS_CONTENT_TYPE>).setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/^# TYPE toolport_tool_calls counter$/m);
    expect(sample(text, 'toolport_tool_calls_total{tool="a",outcome="success"}')).toBe(1);
    expect(text.trimEnd().endsWith('# EOF')).toBe(true);
  });
});
