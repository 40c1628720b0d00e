import autocannon from 'autocannon';
import { cpuSeconds } from './cpu.js';

export interface LoadResult {
  /** Requests per second over the measured time. */
  reqPerSec: number;
  requests: number;
  seconds: number;
  non2xx: number;
  errors: number;
  /** Latency percentiles of 2xx responses with sub-millisecond resolution. */
  p50Ms: number;
  p99Ms: number;
  /** CPU seconds (user + system) the server process used over the measured time; NaN when not measured. */
  cpuSeconds: number;
}

/** The server's CPU time per request answered, in microseconds (NaN when not measured or nothing answered). */
export function cpuUsPerRequest(result: LoadResult): number {
  return result.requests === 0 ? Number.NaN : (result.cpuSeconds / result.requests) * 1e6;
}

/** Response times of 2xx responses (ms, as floats), gathered over one or several runs. */
export class Latencies {
  #times = new Float64Array(1 << 16);
  #count = 0;

  add(ms: number): void {
    if (this.#count === this.#times.length) {
      const bigger = new Float64Array(this.#times.length * 2);
      bigger.set(this.#times);
      this.#times = bigger;
    }
    this.#times[this.#count++] = ms;
  }

  /** Nearest-rank percentile; NaN when nothing was recorded. */
  percentile(p: number): number {
    if (this.#count === 0) return Number.NaN;
    const sorted = this.#times.slice(0, this.#count).sort();
    return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
  }
}

/** Several runs of one target as one result: their requests over their time, latencies pooled. */
export function combine(runs: LoadResult[], latencies: Latencies): LoadResult {
  const requests = runs.reduce((n, r) => n + r.requests, 0);
  const seconds = runs.reduce((n, r) => n + r.seconds, 0);
  return {
    reqPerSec: requests / seconds,
    requests,
    seconds,
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    p50Ms: latencies.percentile(50),
    p99Ms: latencies.percentile(99),
    cpuSeconds: runs.reduce((n, r) => n + r.cpuSeconds, 0),
  };
}

/**
 * Run autocannon once; with `serverPid`, also the CPU time that server process used meanwhile. Its own latency histogram stores whole milliseconds, which
 * reads as "0 ms" for a loopback server, so we record each 2xx response time (a
 * float in ms) ourselves — into `latencies` when given, to pool several runs.
 */
export function load(options: autocannon.Options, latencies = new Latencies(), serverPid?: number): Promise<LoadResult> {
  const own = new Latencies();
  const cpuBefore = serverPid === undefined ? Number.NaN : cpuSeconds(serverPid);
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err, result) => {
      if (err) return reject(err);
      const cpu = serverPid === undefined ? Number.NaN : cpuSeconds(serverPid) - cpuBefore;
      const seconds = result.duration;
      // Only 2xx answers count as served requests (same rule as autocannon's own histogram).
      const served = (result as unknown as { '2xx': number })['2xx'];
      resolve({
        reqPerSec: served / seconds,
        requests: served,
        seconds,
        non2xx: result.non2xx,
        errors: result.errors,
        p50Ms: own.percentile(50),
        p99Ms: own.percentile(99),
        cpuSeconds: cpu,
      });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) return;
      own.add(responseTime);
      latencies.add(responseTime);
    });
  });
}
