/** Shared by the task tests. */

/** A result without what differs between two runs of the same call. */
export function comparable(result: Record<string, any>): Record<string, any> {
  const { duration_ms: _duration, ...rest } = result;
  return rest;
}

/**
 * Waits for an event, not for the clock: polls `check` until it answers something truthy and
 * answers that (or fails naming `what` after `timeoutMs`, a bound for a stuck test, not a timing).
 */
export async function until<T>(what: string, check: () => T | Promise<T>, timeoutMs = 20_000): Promise<NonNullable<T>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > end) throw new Error(`${what}: not reached within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
