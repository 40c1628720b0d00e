/**
 * Prometheus metrics (prom-client): calls by tool and outcome, call durations, session commit
 * conflicts, ledger lookups, store errors, rate-limited requests, ended tasks, and the process's own metrics.
 *
 * The two per-call series are counted in plain arrays and handed to prom-client's registry as
 * metrics of their own, read at scrape time: prom-client builds a string of the label set on every
 * `inc`/`observe`, which measured 2.2 µs more CPU per call through Fastify (docs/design.md). Every
 * other metric is prom-client's own.
 */
import { collectDefaultMetrics, Counter, Gauge, Registry, type Metric } from 'prom-client';

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
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
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

/** One upstream's guards as the metrics read them at scrape time (docs/tool-sources.md, "Breakers and limits"). */
export interface UpstreamGuardSample {
  source: string;
  upstream: string;
  breaker: 'closed' | 'half_open' | 'open';
  in_flight: number;
  queued: number;
  opened: number;
  rejected: { open: number; busy: number; rate: number };
}

const BREAKER_VALUE = { closed: 0, half_open: 1, open: 2 } as const;

/** The series of one upstream metric: labels beside `source` and `upstream`, and the value. */
type UpstreamValues = (sample: UpstreamGuardSample) => [Record<string, string>, number][];

/** A metric of the upstreams' guards, read from them when scraped: nothing is counted per call. */
function upstreamMetric(
  kind: typeof Counter | typeof Gauge,
  name: string,
  help: string,
  read: () => readonly UpstreamGuardSample[],
  values: UpstreamValues,
  labelNames: string[] = [],
): Counter | Gauge {
  // The guards keep their own totals: each scrape replaces the series with what they hold now.
  function collect(this: Counter | Gauge): void {
    this.reset();
    for (const u of read()) {
      for (const [labels, value] of values(u)) {
        const all = { source: u.source, upstream: u.upstream, ...labels };
        if (this instanceof Gauge) this.set(all, value);
        else this.inc(all, value);
      }
    }
  }
  return new kind({ name, help, labelNames: ['source', 'upstream', ...labelNames], registers: [], collect });
}

export class Metrics {
  readonly #app = new Registry();
  readonly registry: Registry;
  readonly #series = new Map<string, ToolSeries>();
  readonly #conflicts = this.#counter(
    'toolport_session_commit_conflicts_total',
    'Session commits refused because a key read had changed (the handler ran again)',
    'tool',
  );
  readonly #ledger = this.#counter(
    'toolport_ledger_lookups_total',
    'Effect ledger lookups by result: hit (replayed), miss (ran), wait (waited for a running twin), in_progress',
    'result',
  );
  readonly #unknown = this.#counter(
    'toolport_ledger_unknown_total',
    'Ledger leases that lapsed without a record, by tool: outcomes unknown until an admin resolves them',
    'tool',
  );
  readonly #storeErrors = this.#counter('toolport_store_errors_total', 'Requests answered 503 because the store could not be reached');
  readonly #tasks = this.#counter('toolport_tasks_total', 'Tasks ended by the replica that ran them, by status (completed, failed, cancelled)', 'status');
  readonly #approvals = this.#counter(
    'toolport_approvals_total',
    'Approval steps (docs/approvals.md) by outcome: requested, approved, denied, expired, executed, replayed',
    'outcome',
  );
  readonly #rateLimited = this.#counter(
    'toolport_rate_limited_total',
    'Requests answered 429 because the API key passed its rate_per_min, by caller',
    'caller',
  );
  readonly #guardrailDenials = this.#counter(
    'toolport_guardrail_denials_total',
    'Calls refused by a guardrail (docs/guardrails.md), by guardrail',
    'guardrail',
  );
  readonly #overloaded = this.#counter('toolport_overloaded_total', 'New calls answered 503 because the event loop lagged past MAX_EVENT_LOOP_DELAY_MS');

  #eventLoopLagMs: () => number = () => 0;

  constructor() {
    const lag = () => this.#eventLoopLagMs() / 1000;
    new Gauge({
      name: 'toolport_event_loop_lag_seconds',
      help: 'How late the event loop turns (the worst delay of the last 1-2 s): past MAX_EVENT_LOOP_DELAY_MS new calls answer 503',
      registers: [this.#app],
      collect() {
        this.set(lag());
      },
    });
    // Look-alikes of prom-client's metrics (name, help, type, get()), which its registry takes as they are.
    const register = (metric: ScrapedMetric) => this.#app.registerMetric(metric as unknown as Metric);
    register(new CallCounter('toolport_tool_calls_total', 'Tool calls by tool and outcome (success, or the error code)', this.#series));
    register(new DurationHistogram('toolport_tool_call_duration_seconds', 'Time from receiving a call to its result, by tool', this.#series));
    this.registry = Registry.merge([processMetrics(), this.#app]);
  }

  #counter(name: string, help: string, label?: string): Counter {
    return new Counter({ name, help, labelNames: label === undefined ? [] : [label], registers: [this.#app] });
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

  /** The upstreams' breakers, places and refusals, read at each scrape. */
  watchUpstreams(read: () => readonly UpstreamGuardSample[]): void {
    const metrics = [
      upstreamMetric(Gauge, 'toolport_upstream_breaker_state', "An upstream's circuit breaker: 0 closed, 1 half-open (a call probes), 2 open", read, (u) => [
        [{}, BREAKER_VALUE[u.breaker]],
      ]),
      upstreamMetric(Counter, 'toolport_upstream_breaker_opened_total', "Times an upstream's circuit breaker opened", read, (u) => [[{}, u.opened]]),
      upstreamMetric(Gauge, 'toolport_upstream_in_flight', 'Calls at an upstream now', read, (u) => [[{}, u.in_flight]]),
      upstreamMetric(Gauge, 'toolport_upstream_queued', 'Calls waiting for a place at an upstream (its max_concurrency)', read, (u) => [[{}, u.queued]]),
      upstreamMetric(
        Counter,
        'toolport_upstream_rejected_total',
        'Calls answered without reaching their upstream, by reason: open (breaker), busy (no place before the deadline), rate (rate_per_min)',
        read,
        (u) => [
          [{ reason: 'open' }, u.rejected.open],
          [{ reason: 'busy' }, u.rejected.busy],
          [{ reason: 'rate' }, u.rejected.rate],
        ],
        ['reason'],
      ),
    ];
    // The registry scraped is a merge made at the start: a metric added later joins it directly.
    for (const metric of metrics) this.registry.registerMetric(metric);
  }

  sessionConflict(tool: string): void {
    this.#conflicts.inc({ tool });
  }

  ledgerLookup(result: LedgerLookup): void {
    this.#ledger.inc({ result });
  }

  ledgerUnknown(tool: string): void {
    this.#unknown.inc({ tool });
  }

  /** toolport_event_loop_lag_seconds reads `lagMs` at each scrape. */
  watchEventLoop(lagMs: () => number): void {
    this.#eventLoopLagMs = lagMs;
  }

  overloaded(): void {
    this.#overloaded.inc();
  }

  storeError(): void {
    this.#storeErrors.inc();
  }

  rateLimited(caller: string): void {
    this.#rateLimited.inc({ caller });
  }

  taskEnded(status: string): void {
    this.#tasks.inc({ status });
  }

  guardrailDenied(guardrail: string): void {
    this.#guardrailDenials.inc({ guardrail });
  }

  approval(outcome: 'requested' | 'approved' | 'denied' | 'expired' | 'executed' | 'replayed'): void {
    this.#approvals.inc({ outcome });
  }
}
