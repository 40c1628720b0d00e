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

/** Starts `name` as a task on a listening toolport (`Prefer: respond-async`): fails unless it answers 202; answers the task's id. */
export async function startTask(base: string | URL, name: string, args: Record<string, unknown>): Promise<string> {
  const started = await fetch(new URL('/tools/invoke', base), {
    method: 'POST',
    headers: { 'content-type': 'application/json', prefer: 'respond-async' },
    body: JSON.stringify({ name, arguments: args }),
  });
  if (started.status !== 202) throw new Error(`starting ${name} as a task answered ${started.status}: ${await started.text()}`);
  return ((await started.json()) as { task_id: string }).task_id;
}
