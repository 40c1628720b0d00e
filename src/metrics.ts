/**
 * Prometheus metrics (prom-client): calls by tool and outcome, call durations, session commit
 * conflicts, ledger lookups, store errors, and the process's own metrics.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

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

export class Metrics {
  readonly #app = new Registry();
  readonly registry: Registry;
  readonly #calls = new Counter({ name: 'toolport_tool_calls_total', help: 'Tool calls by tool and outcome (success, or the error code)', labelNames: ['tool', 'outcome'] as const, registers: [this.#app] });
  readonly #duration = new Histogram({
    name: 'toolport_tool_call_duration_seconds',
    help: 'Time from receiving a call to its result, by tool',
    labelNames: ['tool'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.#app],
  });
  readonly #conflicts = new Counter({ name: 'toolport_session_commit_conflicts_total', help: 'Session commits refused because a key read had changed (the handler ran again)', labelNames: ['tool'] as const, registers: [this.#app] });
  readonly #ledger = new Counter({ name: 'toolport_ledger_lookups_total', help: 'Effect ledger lookups by result: hit (replayed), miss (ran), wait (waited for a running twin), in_progress', labelNames: ['result'] as const, registers: [this.#app] });
  readonly #storeErrors = new Counter({ name: 'toolport_store_errors_total', help: 'Requests answered 503 because the store could not be reached', registers: [this.#app] });

  constructor() {
    this.registry = Registry.merge([processMetrics(), this.#app]);
  }

  /** Label children by tool (and outcome), made once: prom-client hashes the labels on every call otherwise. */
  readonly #callSeries = new Map<string, { calls: Map<string, Counter.Internal>; duration: Histogram.Internal<'tool'> }>();

  called(tool: string, outcome: string, durationMs: number): void {
    let series = this.#callSeries.get(tool);
    if (series === undefined) {
      series = { calls: new Map(), duration: this.#duration.labels({ tool }) };
      this.#callSeries.set(tool, series);
    }
    let calls = series.calls.get(outcome);
    if (calls === undefined) {
      calls = this.#calls.labels({ tool, outcome });
      series.calls.set(outcome, calls);
    }
    calls.inc();
    series.duration.observe(durationMs / 1000);
  }

  sessionConflict(tool: string): void {
    this.#conflicts.inc({ tool });
  }

  ledgerLookup(result: LedgerLookup): void {
    this.#ledger.inc({ result });
  }

  storeError(): void {
    this.#storeErrors.inc();
  }
}
