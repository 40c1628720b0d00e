import autocannon from 'autocannon';

export interface LoadResult {
  result: autocannon.Result;
  /** Latency percentiles of 2xx responses with sub-millisecond resolution. */
  p50Ms: number;
  p99Ms: number;
}

/**
 * Run autocannon once. Its own latency histogram stores whole milliseconds, which
 * reads as "0 ms" for a loopback server, so we record each 2xx response time (a
 * float in ms) ourselves and compute the percentiles from that.
 */
export function load(options: autocannon.Options): Promise<LoadResult> {
  let times = new Float64Array(1 << 16);
  let count = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(options, (err, result) => {
      if (err) return reject(err);
      const sorted = times.subarray(0, count).sort();
      resolve({ result, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) });
    });
    instance.on('response', (_client, statusCode, _bytes, responseTime) => {
      if (statusCode < 200 || statusCode > 299) return; // same rule as autocannon's own histogram
      if (count === times.length) {
        const bigger = new Float64Array(times.length * 2);
        bigger.set(times);
        times = bigger;
      }
      times[count++] = responseTime;
    });
  });
}

/** Nearest-rank percentile of an ascending array; NaN when nothing was recorded. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
