import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where a bench run writes its JSON: BENCH_RESULTS when set, else bench/results/ (ignored by git,
 * so a run leaves the work tree clean).
 */
export function resultsDir(): string {
  const chosen = process.env.BENCH_RESULTS;
  return chosen !== undefined && chosen !== '' ? path.resolve(chosen) : path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'results');
}
