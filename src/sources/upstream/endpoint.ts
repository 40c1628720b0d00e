/** Endpoint URLs of a tools file, and the failure of a call whose upstream could not be reached. */
import { ToolFailure } from '../../tools/failure.ts';
import type { EntryReader } from '../entry.ts';
import { UpstreamConnectionError } from '../../errors.ts';

/** An http(s) URL split into the origin (fixed: arguments never choose the host) and its path and query. */
export function endpointOf(reader: EntryReader, url: string, key: string): { origin: string; path: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return reader.fail(`${key} must be an http(s) URL, got "${url}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') reader.fail(`${key} must be an http(s) URL, got "${parsed.protocol}"`);
  if (parsed.username !== '' || parsed.password !== '') reader.fail(`${key} must not hold credentials: put them in headers`);
  return { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
}

export function connectionFailure(toolName: string, err: unknown): unknown {
  if (!(err instanceof UpstreamConnectionError)) return err;
  return new ToolFailure(
    'upstream_unavailable',
    `Tool "${toolName}" is unavailable now: its endpoint could not be reached (${err.message}). Retrying later may help.`,
    `endpoint unreachable: ${err.message}`,
  );
}
