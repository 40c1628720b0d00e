/**
 * Prometheus metrics (prom-client): calls by tool and outcome, call durations, session commit
 * conflicts, ledger lookups, store errors, rate-limited requests, ended tasks, and the process's own metrics.
 *
 * The two per-call series are counted on the hot path in plain arrays and handed to prom-client's
 * registry as metrics of their own (`get()` at scrape time): prom-client hashes the label set on
 * every `inc`/`observe`, even on pre-bound children, which measured as the costliest part of a call
 * after the handler (issue 11). The exposition, names and help texts are prom-client's as before.
 */
import { collectDefaultMetrics, Counter, Registry, type Metric } from 'prom-client';

/** Process metrics are collected once per process, however many apps it builds (tests build many). */
let processRegistry: Registry | null = null;
function processMetrics(): Registry {
  if (processRegistry === null) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/** The label of a tool that does not exist: names a model invents must not each become a series. */
export const UNKNOWN_TOOL = '(unknown)';

export type LedgerLookup = 'hit' | 'miss' | 'wait' | 'in_progress';

const DURATION_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Everything counted for one tool. */
class ToolSeries {
  readonly outcomes = new Map<string, number>();
  /** Observations per bucket (not cumulative); the last slot is "above every bound". */
  readonly buckets = new Float64Array(DURATION_BUCKETS.length + 1);
  sum = 0;
  count = 0;

  observe(seconds: number): void {
    let i = 0;
    while (i < DURATION_BUCKETS.length && seconds > DURATION_BUCKETS[i]!) i++;
    this.buckets[i]! += 1;
    this.sum += seconds;
    this.count += 1;
  }
}

interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric as prom-client's Registry reads it: a name, help, type and the samples of `get()`. */
abstract class ScrapedMetric {
  readonly aggregator = 'sum';
  abstract readonly type: 'counter' | 'histogram';
  constructor(
    /** Not readonly: an OpenMetrics registry renames counters in place. */
    public name: string,
    readonly help: string,
  ) {}

  abstract samples(): Sample[];

  async get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.samples() };
  }
}

/** Metrics read from the per-tool series. */
abstract class SeriesMetric extends ScrapedMetric {
  constructor(
    name: string,
    help: string,
    protected readonly series: Map<string, ToolSeries>,
  ) {
    super(name, help);
  }
}

class CallCounter extends SeriesMetric {
  readonly type = 'counter';
  samples(): Sample[] {
    const values: Sample[] = [];
    for (const [tool, s] of this.series) for (const [outcome, value] of s.outcomes) values.push({ labels: { tool, outcome }, value });
    return values;
  }
}

/** A counter with one label, e.g. ledger lookups by result. */
class OneLabelCounter extends ScrapedMetric {
  readonly type = 'counter';
  readonly #counts = new Map<string, number>();
  constructor(
    name: string,
    help: string,
    readonly label: string,
  ) {
    super(name, help);
  }

  inc(value: string): void {
    this.#counts.set(value, (this.#counts.get(value) ?? 0) + 1);
  }

  samples(): Sample[] {
    return [...this.#counts].map(([value, count]) => ({ labels: { [this.label]: value }, value: count }));
  }
}

class DurationHistogram extends SeriesMetric {
  readonly type = 'histogram';
  samples(): Sample[] {
    const values: Sample[] = [];
    for (const [tool, s] of this.series) {
      let cumulative = 0;
      DURATION_BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i]!;
        values.push({ labels: { le, tool }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', tool }, value: s.count, metricName: `${this.name}_bucket` });
      values.push({ labels: { tool }, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: { tool }, value: s.count, metricName: `${this.name}_count` });
    }
    return values;
  }
}

export class Metrics {
  readonly #app = new Registry();
  readonly registry: Registry;
  readonly #series = new Map<string, ToolSeries>();
  readonly #conflicts = new OneLabelCounter(
    'toolport_session_commit_conflicts_total',
    'Session commits refused because a key read had changed (the handler ran again)',
    'tool',
  );
  readonly #ledger = new OneLabelCounter(
    'toolport_ledger_lookups_total',
    'Effect ledger lookups by result: hit (replayed), miss (ran), wait (waited for a running twin), in_progress',
    'result',
  );
  readonly #unknown = new OneLabelCounter(
    'toolport_ledger_unknown_total',
    'Ledger leases that lapsed without a record, by tool: outcomes unknown until an admin resolves them',
    'tool',
  );
  readonly #storeErrors = new Counter({
    name: 'toolport_store_errors_total',
    help: 'Requests answered 503 because the store could not be reached',
    registers: [this.#app],
  });
  readonly #tasks = new OneLabelCounter('toolport_tasks_total', 'Tasks ended by the replica that ran them, by status (completed, failed, cancelled)', 'status');
  readonly #approvals = new OneLabelCounter(
    'toolport_approvals_total',
    'Approval steps (docs/approvals.md) by outcome: requested, approved, denied, expired, executed, replayed',
    'outcome',
  );
  readonly #rateLimited = new OneLabelCounter(
    'toolport_rate_limited_total',
    'Requests answered 429 because the API key passed its rate_per_min, by caller',
    'caller',
  );

  constructor() {
    const register = (metric: ScrapedMetric) => this.#app.registerMetric(metric as unknown as Metric);
    register(this.#conflicts);
    register(this.#ledger);
    register(this.#unknown);
    register(this.#rateLimited);
    register(this.#tasks);
    register(this.#approvals);
    register(new CallCounter('toolport_tool_calls_total', 'Tool calls by tool and outcome (success, or the error code)', this.#series));
    register(new DurationHistogram('toolport_tool_call_duration_seconds', 'Time from receiving a call to its result, by tool', this.#series));
    this.registry = Registry.merge([processMetrics(), this.#app]);
  }

  called(tool: string, outcome: string, durationMs: number): void {
    let series = this.#series.get(tool);
    if (series === undefined) {
      series = new ToolSeries();
      this.#series.set(tool, series);
    }
    series.outcomes.set(outcome, (series.outcomes.get(outcome) ?? 0) + 1);
    series.observe(durationMs / 1000);
  }

  sessionConflict(tool: string): void {
    this.#conflicts.inc(tool);
  }

  ledgerLookup(result: LedgerLookup): void {
    this.#ledger.inc(result);
  }

  ledgerUnknown(tool: string): void {
    this.#unknown.inc(tool);
  }

  storeError(): void {
    this.#storeErrors.inc();
  }

  rateLimited(caller: string): void {
    this.#rateLimited.inc(caller);
  }

  taskEnded(status: string): void {
    this.#tasks.inc(status);
  }

  approval(outcome: 'requested' | 'approved' | 'denied' | 'expired' | 'executed' | 'replayed'): void {
    this.#approvals.inc(outcome);
  }
}
