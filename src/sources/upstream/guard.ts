/**
 * The guards of one upstream (docs/tool-sources.md, "Breakers and limits"), around every call
 * forwarded to it whatever the source kind: a circuit breaker (after `failures` failures or
 * time-outs in a row it opens for `open_s`: calls answer upstream_unavailable at once; then one
 * call probes, and its success closes it), a rate a minute for the upstream and per caller, and a
 * cap on calls at the upstream at once (the others queue until their deadline, then upstream_busy).
 * State is this replica's. Unconfigured limits cost nothing: a closed breaker is one comparison.
 */
import type { Logger } from 'pino';
import { callEnd, Cancellation, type CancelListener } from '../../tools/context.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { ToolContext } from '../../tools/types.ts';
import type { CallHealth } from './health.ts';
import type { GuardSettings } from './limits.ts';
import { RateLimit } from './rate.ts';

/** A queued call gives up this long before its deadline, so that it answers upstream_busy, not deadline_exceeded. */
const BUSY_MARGIN_MS = 100;

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface GuardView {
  /** What is guarded: an origin, or `stdio` for an MCP server run as a child. */
  upstream: string;
  breaker: BreakerState;
  /** While open: the seconds until a call may probe. */
  retry_after_s: number | null;
  /** Failures or time-outs in a row (the breaker opens at `failures`). */
  failures_in_row: number;
  /** How often the breaker opened since the start. */
  opened: number;
  in_flight: number;
  queued: number;
  /** Calls answered without reaching the upstream, by guard. */
  rejected: { open: number; busy: number; rate: number };
  limits: { failures: number | null; open_s: number; max_concurrency: number | null; rate_per_min: number | null; rate_per_min_per_caller: number | null };
}

export class UpstreamGuard {
  readonly #upstream: string;
  readonly #label: string;
  readonly #settings: GuardSettings;
  readonly #health: CallHealth;
  readonly #log: Logger;
  readonly #rate: RateLimit | null;
  readonly #callerRate: RateLimit | null;
  /** Whether any limit besides the breaker is set: without one, a closed breaker lets calls straight through. */
  readonly #limited: boolean;
  /** 0 while closed; else when the breaker lets a probe through (epoch ms). */
  #openUntil = 0;
  #probing = false;
  #failuresInRow = 0;
  #opened = 0;
  #inFlight = 0;
  readonly #queue: Waiter[] = [];
  readonly #rejected = { open: 0, busy: 0, rate: 0 };

  /** `label`: how messages name the upstream to the model (`its endpoint`, `its MCP server "files"`). */
  constructor(upstream: string, label: string, settings: GuardSettings, health: CallHealth, log: Logger) {
    this.#upstream = upstream;
    this.#label = label;
    this.#settings = settings;
    this.#health = health;
    this.#log = log;
    this.#rate = settings.ratePerMin === null ? null : new RateLimit(settings.ratePerMin, false);
    this.#callerRate = settings.ratePerMinPerCaller === null ? null : new RateLimit(settings.ratePerMinPerCaller, true);
    this.#limited = settings.maxConcurrency !== null || this.#rate !== null || this.#callerRate !== null;
  }

  /** Forwards one call through the guards; the outcome counts for the upstream's health and breaker. */
  run<T>(context: ToolContext, forward: () => Promise<T>): Promise<T> {
    if (this.#openUntil === 0 && !this.#limited) return this.#forward(context, forward, false, false);
    return this.#guarded(context, forward);
  }

  view(): GuardView {
    const s = this.#settings;
    const now = Date.now();
    return {
      upstream: this.#upstream,
      breaker: this.#state(now),
      retry_after_s: this.#openUntil > now ? secondsUntil(this.#openUntil, now) : null,
      failures_in_row: this.#failuresInRow,
      opened: this.#opened,
      in_flight: this.#inFlight,
      queued: this.#queue.length,
      rejected: { ...this.#rejected },
      limits: {
        failures: s.failures,
        open_s: s.openMs / 1000,
        max_concurrency: s.maxConcurrency,
        rate_per_min: s.ratePerMin,
        rate_per_min_per_caller: s.ratePerMinPerCaller,
      },
    };
  }

  #state(now: number): BreakerState {
    if (this.#openUntil === 0) return 'closed';
    return this.#probing || now >= this.#openUntil ? 'half_open' : 'open';
  }

  async #guarded<T>(context: ToolContext, forward: () => Promise<T>): Promise<T> {
    const now = Date.now();
    let probe = false;
    if (this.#openUntil !== 0) {
      if (now < this.#openUntil || this.#probing) throw this.#unavailable(now);
      this.#probing = probe = true;
    }
    const caller = context.caller ?? '';
    const capped = this.#settings.maxConcurrency !== null;
    try {
      this.#takeRate(caller, now);
      if (capped) await this.#slot(context, caller);
    } catch (err) {
      if (probe) this.#probing = false;
      throw err;
    }
    // The breaker opened while this call waited for its place: it answers now, as the calls after it do.
    if (capped && !probe && this.#openUntil !== 0) {
      this.#release();
      this.#rate?.giveBack('');
      this.#callerRate?.giveBack(caller);
      throw this.#unavailable(Date.now());
    }
    return this.#forward(context, forward, probe, capped);
  }

  /** `reserved`: the call holds its place at the upstream already (taken by #slot). */
  async #forward<T>(context: ToolContext, forward: () => Promise<T>, probe: boolean, reserved: boolean): Promise<T> {
    if (!reserved) this.#inFlight++;
    try {
      const answer = await forward();
      this.#health.answered();
      this.#closed(probe);
      return answer;
    } catch (err) {
      const outcome = this.#health.settle(context, err);
      if (outcome === 'failed') this.#failed(probe);
      else if (outcome === 'answered') this.#closed(probe);
      else if (probe) this.#probing = false; // cancelled: the next call probes instead
      throw err;
    } finally {
      this.#release();
    }
  }

  #closed(probe: boolean): void {
    this.#failuresInRow = 0;
    if (!probe) return;
    this.#probing = false;
    this.#openUntil = 0;
    this.#log.info({ upstream: this.#upstream }, 'upstream answered the probe: its breaker is closed');
  }

  #failed(probe: boolean): void {
    this.#failuresInRow++;
    const failures = this.#settings.failures;
    if (failures === null) return;
    if (probe || (this.#openUntil === 0 && this.#failuresInRow >= failures)) {
      this.#probing = false;
      this.#openUntil = Date.now() + this.#settings.openMs;
      this.#opened++;
      this.#log.warn({ upstream: this.#upstream, failuresInRow: this.#failuresInRow, openMs: this.#settings.openMs }, 'upstream breaker is open');
    }
  }

  #unavailable(now: number): ToolFailure {
    this.#rejected.open++;
    const wait = this.#probing ? 1 : secondsUntil(this.#openUntil, now);
    return new ToolFailure(
      'upstream_unavailable',
      `Tool is unavailable now: ${this.#label} failed ${this.#settings.failures} times in a row, so toolport stopped calling it for a while. Retry in about ${wait} s, or take another approach meanwhile.`,
      `circuit breaker open for ${this.#upstream}${this.#probing ? ' (a probe call is under way)' : ''}`,
      wait,
    );
  }

  #takeRate(caller: string, now: number): void {
    const shared = this.#rate?.take('', now) ?? 0;
    if (shared > 0) throw this.#rateLimited(shared, `${this.#rate!.perMin} calls a minute`);
    const own = this.#callerRate?.take(caller, now) ?? 0;
    if (own > 0) {
      this.#rate?.giveBack('');
      throw this.#rateLimited(own, `${this.#callerRate!.perMin} calls a minute per caller`);
    }
  }

  #rateLimited(wait: number, limit: string): ToolFailure {
    this.#rejected.rate++;
    return new ToolFailure(
      'upstream_busy',
      `Tool is busy: ${this.#label} accepts at most ${limit}, and that is reached. Retry in about ${wait} s.`,
      `rate limit of ${this.#upstream} reached (${limit})`,
      wait,
    );
  }

  /** Takes a place at the upstream, waiting in line for one when all are taken. */
  #slot(context: ToolContext, caller: string): Promise<void> {
    if (this.#inFlight < this.#settings.maxConcurrency! && this.#queue.length === 0) {
      this.#inFlight++;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter = new Waiter(this, context, resolve, (err) => {
        this.#rate?.giveBack('');
        this.#callerRate?.giveBack(caller);
        reject(err);
      });
      this.#queue.push(waiter);
      waiter.start();
    });
  }

  /** A call left the upstream: the first queued call takes its place. */
  #release(): void {
    const next = this.#queue.shift();
    if (next === undefined) this.#inFlight--;
    else next.grant();
  }

  /** A queued call gave up (its deadline is near, or it was cancelled). */
  leave(waiter: Waiter, timedOut: boolean): ToolFailure | null {
    const i = this.#queue.indexOf(waiter);
    if (i >= 0) this.#queue.splice(i, 1);
    if (!timedOut) return null;
    this.#rejected.busy++;
    const max = this.#settings.maxConcurrency;
    return new ToolFailure(
      'upstream_busy',
      `Tool is busy: ${this.#label} takes at most ${max} call${max === 1 ? '' : 's'} at once and none finished in time. Retry later.`,
      `${this.#upstream}: ${max} calls in flight, queued until the deadline`,
      1,
    );
  }
}

/** The status of an upstream known only by its calls (HTTP, OpenAPI): its connection is never down. */
export function callsOnlyStatus(source: string, kind: 'openapi' | 'http', calls: CallHealth, guards: readonly UpstreamGuard[]) {
  return { source, kind, up: true, reason: null, calls: calls.view(), pending: 0, guards: guards.map((guard) => guard.view()) } as const;
}

function secondsUntil(at: number, now: number): number {
  return Math.max(1, Math.ceil((at - now) / 1000));
}

/** A call queued for a place at the upstream, until its deadline (less a margin) or its end. */
class Waiter implements CancelListener {
  readonly #guard: UpstreamGuard;
  readonly #context: ToolContext;
  readonly #resolve: () => void;
  readonly #reject: (err: Error) => void;
  readonly #end: Cancellation | AbortSignal;
  #timer: NodeJS.Timeout | null = null;
  #done = false;

  constructor(guard: UpstreamGuard, context: ToolContext, resolve: () => void, reject: (err: Error) => void) {
    this.#guard = guard;
    this.#context = context;
    this.#resolve = resolve;
    this.#reject = reject;
    this.#end = callEnd(context);
  }

  start(): void {
    const wait = this.#context.deadline - Date.now() - BUSY_MARGIN_MS;
    this.#timer = setTimeout(() => this.#give(true), Math.max(0, wait));
    if (this.#end instanceof Cancellation) this.#end.subscribe(this);
    else if (this.#end.aborted) this.onCancelled();
    else this.#end.addEventListener('abort', this.onCancelled, { once: true });
  }

  onCancelled = (): void => this.#give(false);

  grant(): void {
    if (this.#finish()) this.#resolve();
  }

  #give(timedOut: boolean): void {
    if (!this.#finish()) return;
    const failure = this.#guard.leave(this, timedOut);
    const end = this.#end;
    this.#reject(failure ?? (end instanceof Cancellation ? end.reason : (end.reason as Error | undefined)) ?? new Error('the call ended'));
  }

  #finish(): boolean {
    if (this.#done) return false;
    this.#done = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#end instanceof Cancellation) this.#end.unsubscribe(this);
    else this.#end.removeEventListener('abort', this.onCancelled);
    return true;
  }
}
