/** Shared by the task tests. */

/** A result without what differs between two runs of the same call. */
export function comparable(result: Record<string, any>): Record<string, any> {
  const { duration_ms: _duration, ...rest } = result;
  return rest;
}
