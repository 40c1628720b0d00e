// Benchmark scenarios as data, so later work can add rows without touching the runner.
// Ports are only known at run time, so a scenario names its `target` server and a
// `path`; the runner turns them into a URL. Only targets that are used get started.

export type Target = 'bare' | 'memory' | 'redis' | 'sdk';
export const TARGETS: readonly Target[] = ['bare', 'memory', 'redis', 'sdk'];

export interface Scenario {
  name: string;
  target: Target;
  path: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Requests sent once before the load (e.g. creating the plan that the scenario updates); each must answer 2xx. */
  setup?: { path: string; headers: Record<string, string>; body: string }[];
  /** Each connection gets its own session (`<x-session-id>-<n>`, set up once each), so calls do not contend. */
  sessionPerConnection?: boolean;
  /** Replace `[<id>]` in the body with a fresh id on every request (autocannon idReplacement). */
  uniqueIds?: boolean;
  /** What this row must reach; the report says whether it did, and the run exits 1 when a target is missed. */
  targets?: BenchTarget[];
  /** Keep a console open on GET /calls/stream of the row's server while it is measured (the feed watched). */
  watched?: boolean;
  /** A fixed rate (requests per second over all connections, autocannon's overallRate) instead of as fast as it goes; its baseline slices run at the same rate. */
  overallRate?: number;
}

export type BenchTarget =
  /** req/s at least `min` × the bare baseline's */
  | { kind: 'ratio'; min: number }
  /** req/s at least `min` × the row named `of` */
  | { kind: 'relative'; of: string; min: number }
  /** p99 at most `max` × the bare baseline's p99 */
  | { kind: 'p99'; max: number }
  /** p50 latency at most `maxMs` */
  | { kind: 'p50'; maxMs: number }
  /** CPU per request at most `max` × the row named `of` (both against their own neighbouring baselines) */
  | { kind: 'cpuOf'; of: string; max: number }
  /** CPU per request at most `maxUs` µs above the row named `of` */
  | { kind: 'cpuPlus'; of: string; maxUs: number }
  /** p50 or p99 latency at most `maxMs` above the baseline's (slices alternating at the same rate) */
  | { kind: 'addedP50' | 'addedP99'; maxMs: number };

/** Every other scenario's req/s is reported as a ratio to this one. */
export const BASELINE = 'bare fastify POST echo';
/** The floor of toolport's edge: a Fastify route that parses the same body and sends the same answer. */
const FLOOR = "edge floor: Fastify parsing the invoke body and sending a native answer's bytes";

const JSON_HEADERS = { 'content-type': 'application/json' };
const SESSION_HEADERS = { ...JSON_HEADERS, 'x-session-id': 'bench-1' };
// The baseline echoes the very same payload the native invoke parses, so the ratio isolates toolport's own cost.
const INVOKE_BODY = JSON.stringify({ name: 'echo', arguments: { text: 'hi' } });
// The idempotent echo: the same arguments every time replay one record (hit); a fresh id per
// request makes every call a new entry: begin, run, record (miss).
// The same echo, its handler run in a worker thread of the pool (`isolation: 'worker'`).
const ISOLATED_BODY = JSON.stringify({ name: 'echo_isolated', arguments: { text: 'hi' } });
const LEDGER_HIT_BODY = JSON.stringify({ name: 'echo_once', arguments: { text: 'hi' } });
const LEDGER_MISS_BODY = JSON.stringify({ name: 'echo_once', arguments: { text: '[<id>]' } });

// The same tools/call for toolport's /mcp and the official SDK's stateless server (sdk-stateless.ts):
// headers as the SDK clients send them after the handshake.
const MCP_HEADERS = { ...JSON_HEADERS, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const MCP_CALL = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'hi' } } });

/**
 * planning_update_step on step 1 of a plan of `steps` steps. One session per connection: what is
 * measured is the cost of an update as the plan grows, not 32 writers contending for one step.
 */
function planUpdate(target: Target, steps: number): Scenario {
  const small = `planning_update_step, 1-step plan (${target} store)`;
  const headers = { ...JSON_HEADERS, 'x-session-id': `bench-plan-${steps}` };
  const initial_steps = Array.from({ length: steps }, (_, i) => `step ${i + 1} of the benchmark plan`);
  return {
    name: `planning_update_step, ${steps}-step plan (${target} store)`,
    target,
    path: '/tools/invoke',
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'planning_update_step', arguments: { step_id: 1, status: 'in_progress' } }),
    setup: [{ path: '/tools/invoke', headers, body: JSON.stringify({ name: 'planning_setup_plan', arguments: { objective: 'benchmark', initial_steps } }) }],
    sessionPerConnection: true,
    ...(steps > 1 && { targets: [{ kind: 'relative', of: small, min: 0.9 }] }),
  };
}

/** A whole turn of 8 calls to a 50 ms handler: they run in parallel, so it answers in ≈ 50 ms. */
const TURN_BODY = JSON.stringify({ calls: Array.from({ length: 8 }, (_, i) => ({ id: `c${i}`, name: 'wait_50ms', arguments: {} })) });

export const scenarios: Scenario[] = [
  { name: BASELINE, target: 'bare', path: '/echo', method: 'POST', headers: JSON_HEADERS, body: INVOKE_BODY },
  // The same body parsed and the same answer bytes as a native call, with nothing of toolport between.
  { name: FLOOR, target: 'bare', path: '/floor', method: 'POST', headers: JSON_HEADERS, body: INVOKE_BODY },
  {
    name: 'native invoke (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: INVOKE_BODY,
    targets: [
      { kind: 'ratio', min: 0.75 },
      { kind: 'cpuPlus', of: FLOOR, maxUs: 10 },
      { kind: 'p99', max: 2 },
    ],
  },
  {
    name: 'native invoke, console watching /calls/stream (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: INVOKE_BODY,
    watched: true,
    targets: [{ kind: 'cpuOf', of: 'native invoke (memory store)', max: 1.15 }],
  },
  {
    name: 'native invoke at a fixed 2,000 calls/s (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: INVOKE_BODY,
    overallRate: 2000,
    targets: [
      { kind: 'addedP50', maxMs: 1 },
      { kind: 'addedP99', maxMs: 5 },
    ],
  },
  // Isolated against in process at the same fixed rate: a process's CPU per call grows as its rate
  // falls, and the worker round trip lowers the rate a loaded machine reaches as fast as it goes.
  {
    name: 'isolated native call at a fixed 2,000 calls/s (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: ISOLATED_BODY,
    overallRate: 2000,
    targets: [{ kind: 'cpuPlus', of: 'native invoke at a fixed 2,000 calls/s (memory store)', maxUs: 60 }],
  },
  {
    name: 'isolated native call (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: ISOLATED_BODY,
    targets: [{ kind: 'cpuPlus', of: 'native invoke (memory store)', maxUs: 60 }],
  },
  { name: 'native invoke + session (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: SESSION_HEADERS, body: INVOKE_BODY },
  {
    name: 'native invoke (redis store)',
    target: 'redis',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: INVOKE_BODY,
    targets: [{ kind: 'ratio', min: 0.7 }],
  },
  {
    name: 'native invoke, console watching /calls/stream (redis store)',
    target: 'redis',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: INVOKE_BODY,
    watched: true,
    targets: [{ kind: 'cpuOf', of: 'native invoke (redis store)', max: 1.15 }],
  },
  { name: 'native invoke + session (redis store)', target: 'redis', path: '/tools/invoke', method: 'POST', headers: SESSION_HEADERS, body: INVOKE_BODY },
  planUpdate('memory', 1),
  planUpdate('memory', 1000),
  planUpdate('redis', 1),
  planUpdate('redis', 1000),
  { name: 'ledger hit (memory store)', target: 'memory', path: '/tools/invoke', method: 'POST', headers: JSON_HEADERS, body: LEDGER_HIT_BODY },
  {
    name: 'ledger miss (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: LEDGER_MISS_BODY,
    uniqueIds: true,
  },
  {
    name: 'ledger hit (redis store)',
    target: 'redis',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: LEDGER_HIT_BODY,
    targets: [{ kind: 'ratio', min: 0.6 }],
  },
  {
    name: 'ledger miss (redis store)',
    target: 'redis',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: LEDGER_MISS_BODY,
    uniqueIds: true,
    targets: [{ kind: 'ratio', min: 0.45 }],
  },
  {
    name: '/mcp tools/call (memory store)',
    target: 'memory',
    path: '/mcp',
    method: 'POST',
    headers: MCP_HEADERS,
    body: MCP_CALL,
    targets: [{ kind: 'ratio', min: 0.6 }],
  },
  { name: 'official SDK stateless MCP server tools/call', target: 'sdk', path: '/mcp', method: 'POST', headers: MCP_HEADERS, body: MCP_CALL },
  {
    name: 'turn of 8 calls to a 50 ms handler (memory store)',
    target: 'memory',
    path: '/tools/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: TURN_BODY,
    targets: [{ kind: 'p50', maxMs: 70 }],
  },
  {
    name: 'per-tool route (memory store)',
    target: 'memory',
    path: '/tools/echo/invoke',
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ text: 'hi' }),
  },
];
