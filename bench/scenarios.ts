// Benchmark scenarios as data, so later work can add rows without touching the runner.
// Ports are only known at run time, so a scenario names its `target` server and a
// `path`; the runner turns them into a URL. Only targets that are used get started.

export type Target = 'bare' | 'memory' | 'redis';
export const TARGETS: readonly Target[] = ['bare', 'memory', 'redis'];

export interface Scenario {
  name: string;
  target: Target;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Replace `[<id>]` in the body with a fresh id on every request (autocannon idReplacement). */
  uniqueIds?: boolean;
}

/** Every other scenario's req/s is reported as a ratio to this one. */
export const BASELINE = 'bare fastify POST echo';

const JSON_HEADERS = { 'content-type': 'application/json' };
const SESSION_HEADERS = { ...JSON_HEADERS, 'x-session-id': 'bench-1' };
// The baseline echoes the very same payload the native invoke parses, so the ratio isolates toolport's own cost.
const INVOKE_BODY = JSON.stringify({ name: 'echo', arguments: { text: 'hi' } });
// The idempotent echo: the same arguments every time replay one record (hit); a fresh id per
// request makes every call a new entry: begin, run, record (miss).
const LEDGER_HIT_BODY = JSON.stringify({ name: 'echo_once', arguments: { text: 'hi' } });
const LEDGER_MISS_BODY = JSON.stringify({ name: 'echo_once', arguments: { text: '[<id>]' } });

export const scenarios: Scenario[] = [
  { name: BASELINE, target: 'bare', path: '/echo', method: 'POST', headers: JSON_HEADERS, body: INVOKE_BODY },
  { name: 'native invoke (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: INVOKE_BODY },
  { name: 'native invoke + session (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: SESSION_HEADERS, body: INVOKE_BODY },
  { name: 'native invoke (redis store)', target: 'redis', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: INVOKE_BODY },
  { name: 'native invoke + session (redis store)', target: 'redis', path: '/tools/invoke', method: 'POST', headers: SESSION_HEADERS, body: INVOKE_BODY },
  { name: 'ledger hit (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: LEDGER_HIT_BODY },
  { name: 'ledger miss (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: LEDGER_MISS_BODY, uniqueIds: true },
  { name: 'ledger hit (redis store)', target: 'redis', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: LEDGER_HIT_BODY },
  { name: 'ledger miss (redis store)', target: 'redis', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: LEDGER_MISS_BODY, uniqueIds: true },
  { name: 'per-tool route (memory store)', target: 'memory', path: '/tools/echo/invoke', method: 'POST', headers: JSON_HEADERS, body: JSON.stringify({ text: 'hi' }) },
];
