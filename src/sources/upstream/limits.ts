/**
 * The guards of one upstream as a tools file sets them (docs/tool-sources.md, "Breakers and
 * limits"): `breaker: {failures, open_s}` (or `false`), `max_concurrency`, `rate_per_min` and
 * `rate_per_min_per_caller`, the same keys on an HTTP tool, an OpenAPI source and an MCP source.
 */
import { isObject } from '../../json.ts';
import type { EntryReader } from '../entry.ts';

export const GUARD_KEYS = ['breaker', 'max_concurrency', 'rate_per_min', 'rate_per_min_per_caller'] as const;

export interface GuardSettings {
  /** Consecutive failures or time-outs that open the breaker; null: no breaker. */
  failures: number | null;
  /** How long an open breaker answers at once before one call probes. */
  openMs: number;
  /** Calls at the upstream at once; null: unlimited. */
  maxConcurrency: number | null;
  /** Calls a minute to the upstream, from all callers together; null: unlimited. */
  ratePerMin: number | null;
  /** Calls a minute to the upstream from one caller (API key or user); null: unlimited. */
  ratePerMinPerCaller: number | null;
}

export const DEFAULT_FAILURES = 5;
export const DEFAULT_OPEN_S = 30;

export const DEFAULT_GUARD: GuardSettings = Object.freeze({
  failures: DEFAULT_FAILURES,
  openMs: DEFAULT_OPEN_S * 1000,
  maxConcurrency: null,
  ratePerMin: null,
  ratePerMinPerCaller: null,
});

const BREAKER_KEYS = ['failures', 'open_s'];

/** The entry's guard keys, checked; defaults for what it leaves out. */
export function readGuardSettings(reader: EntryReader): GuardSettings {
  const settings: GuardSettings = { ...DEFAULT_GUARD };
  const breaker = reader.raw.breaker;
  if (breaker === false) settings.failures = null;
  else if (breaker !== undefined) {
    if (!isObject(breaker)) reader.fail('breaker must be a mapping {failures, open_s}, or false to turn it off');
    const unknown = Object.keys(breaker).find((k) => !BREAKER_KEYS.includes(k));
    if (unknown !== undefined) reader.fail(`breaker.${unknown} is not one of ${BREAKER_KEYS.join(', ')}`);
    const { failures, open_s: openS } = breaker;
    if (failures !== undefined) {
      if (!Number.isInteger(failures) || (failures as number) < 1) reader.fail('breaker.failures must be a positive whole number');
      settings.failures = failures as number;
    }
    if (openS !== undefined) {
      if (typeof openS !== 'number' || !Number.isFinite(openS) || openS <= 0 || openS > 86_400)
        reader.fail('breaker.open_s must be a number of seconds above 0 (at most 86400)');
      settings.openMs = Math.round(openS * 1000);
    }
  }
  settings.maxConcurrency = reader.positiveInteger('max_concurrency') ?? null;
  settings.ratePerMin = reader.positiveInteger('rate_per_min') ?? null;
  settings.ratePerMinPerCaller = reader.positiveInteger('rate_per_min_per_caller') ?? null;
  return settings;
}

/** Whether the entry sets any guard key (HTTP tools of one origin share the settings of those that do). */
export function setsGuard(reader: EntryReader): boolean {
  return GUARD_KEYS.some((key) => reader.has(key));
}

/** The settings as the tools file writes them, for a message naming a disagreement. */
export function describeGuard(settings: GuardSettings): string {
  const breaker = settings.failures === null ? 'breaker: false' : `breaker: {failures: ${settings.failures}, open_s: ${settings.openMs / 1000}}`;
  return `${breaker}, max_concurrency: ${settings.maxConcurrency ?? 'none'}, rate_per_min: ${settings.ratePerMin ?? 'none'}, rate_per_min_per_caller: ${settings.ratePerMinPerCaller ?? 'none'}`;
}
