import { mkdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export interface Row {
  scenario: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** req/s divided by the baseline's req/s; null when the baseline was not run. */
  ratioToBare: number | null;
  /** The server process's CPU time (user + system, from /proc) per request answered, in µs. */
  cpuUsPerRequest: number;
  /** CPU per request divided by bare Fastify's, over the baseline slices beside the row's; null without a baseline. */
  cpuRatioToBare: number | null;
  non2xx: number;
  errors: number;
  /** The row's targets as text ('' when it has none), and whether this run met them (null: not judged). */
  target: string;
  met: boolean | null;
}

const HEADER = ['scenario', 'CPU µs/req', 'CPU × bare', 'req/s', 'ratio to bare', 'p50 ms', 'p99 ms', 'non-2xx/errors', 'target', 'met?'];

export function formatTable(rows: Row[]): string {
  // NaN latency means no 2xx response was recorded at all.
  const ms = (v: number) => (Number.isNaN(v) ? '-' : v.toFixed(2));
  const cells = rows.map((r) => [
    r.scenario,
    Number.isNaN(r.cpuUsPerRequest) ? '-' : r.cpuUsPerRequest.toFixed(0),
    r.cpuRatioToBare === null || Number.isNaN(r.cpuRatioToBare) ? 'n/a' : r.cpuRatioToBare.toFixed(2),
    r.reqPerSec.toFixed(0),
    r.ratioToBare === null ? 'n/a' : r.ratioToBare.toFixed(2),
    ms(r.p50Ms),
    ms(r.p99Ms),
    `${r.non2xx}/${r.errors}`,
    r.target,
    r.met === null ? '' : r.met ? 'yes' : 'NO',
  ]);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  // Scenario names left-aligned, numbers right-aligned so digits line up.
  const line = (c: string[]) => c.map((v, i) => (i === 0 || i === 8 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join(' | ');
  const rule = widths.map((w) => '-'.repeat(w)).join('-|-');
  return [line(HEADER), rule, ...cells.map(line)].join('\n');
}

/** Write the rows plus the machine facts needed to compare runs; returns the file path. */
export async function writeJson(
  resultsDir: string,
  rows: Row[],
  run: { durationSeconds: number; connections: number; baselineRuns: number[] },
): Promise<string> {
  const date = new Date();
  const cpus = os.cpus();
  const report = {
    date: date.toISOString(),
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    ...run,
    results: rows,
  };
  await mkdir(resultsDir, { recursive: true });
  // Full timestamp so several runs a day do not overwrite each other; ':' is not portable in file names.
  const file = path.join(resultsDir, `${date.toISOString().replace(/:/g, '-')}-core.json`);
  await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
  return file;
}
