// The health strip: one chip per upstream behind the catalog (OpenAPI documents, MCP servers, the
// HTTP tools), from GET /sources — up, degraded, down or not called yet, its last error, pinned
// changes waiting for an admin, and its circuit breaker and limits when they act.
import { clockTime, h } from './dom.js';

/** Kinds of source that have an upstream to be healthy or not (built-ins and plugins run inside). */
const UPSTREAM_KINDS = new Set(['openapi', 'mcp', 'http']);

/** From this many upstreams, healthy chips show only their name and state. */
const COMPACT_FROM = 4;

const STATE_TEXT = { up: 'up', degraded: 'degraded', down: 'down', unknown: 'not called yet' };

/**
 * @typedef {{ name: string, kind: string, tools: string[], state: 'up' | 'degraded' | 'down' | 'unknown',
 *   reason: string | null, calls: number, failures: number, pending: number,
 *   last_error: { code: string, detail: string, at: string } | null,
 *   breaker?: 'closed' | 'open' | 'half_open', guards?: GuardRow[] }} SourceRow
 * @typedef {{ upstream: string, breaker: 'closed' | 'open' | 'half_open', retry_after_s: number | null,
 *   in_flight: number, queued: number, rejected: { open: number, busy: number, rate: number },
 *   limits: { max_concurrency: number | null } }} GuardRow
 */

const BREAKER_TEXT = { open: 'breaker open', half_open: 'breaker probing' };

/** What the guards of a source are doing, when they do something: breakers not closed, full places, refusals. */
function guardFacts(guards) {
  const facts = [];
  for (const g of guards) {
    const where = guards.length > 1 ? `${g.upstream}: ` : '';
    if (g.breaker === 'open') facts.push(`${where}breaker open${g.retry_after_s === null ? '' : `, probes in ${g.retry_after_s} s`}`);
    else if (g.breaker === 'half_open') facts.push(`${where}breaker half-open, one call probes`);
    const max = g.limits.max_concurrency;
    if (max !== null && (g.in_flight >= max || g.queued > 0)) facts.push(`${where}${g.in_flight}/${max} calls at once, ${g.queued} queued`);
    const refused = g.rejected.open + g.rejected.busy + g.rejected.rate;
    if (refused > 0) facts.push(`${where}${refused} call${refused === 1 ? '' : 's'} refused by its guards`);
  }
  return facts;
}

/** A small badge saying a source's state, for the strip and the group headings. */
export function stateBadge(state) {
  const kind = state === 'up' ? 'ok' : state === 'down' ? 'bad' : state === 'degraded' ? 'warn' : '';
  return h('span', { class: `badge state ${kind}`, 'data-state': state }, STATE_TEXT[state] ?? state);
}

/**
 * The strip's chips, or nothing when no source has an upstream. `onPick(row)` opens its group.
 * @param {SourceRow[]} rows
 * @param {(row: SourceRow) => void} onPick
 */
export function healthChips(rows, onPick) {
  const upstreams = rows.filter((row) => UPSTREAM_KINDS.has(row.kind));
  // Many upstreams: the healthy ones shrink to their name and state, so the troubled ones stand out.
  const compact = upstreams.length > COMPACT_FROM;
  return upstreams.map((row) =>
    healthChip(row, onPick, compact && (row.state === 'up' || row.state === 'unknown') && row.pending === 0 && (row.breaker ?? 'closed') === 'closed'),
  );
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** @param {SourceRow} row @param {(row: SourceRow) => void} onPick @param {boolean} compact */
function healthChip(row, onPick, compact) {
  const facts = [`${row.kind === 'http' ? 'HTTP tools' : row.kind === 'mcp' ? 'MCP server' : 'OpenAPI'} · ${plural(row.tools.length, 'tool')}`];
  if (row.calls > 0)
    facts.push(row.failures === 0 ? `last ${plural(row.calls, 'call')} answered` : `${row.failures} of the last ${plural(row.calls, 'call')} failed`);
  if (row.pending > 0) facts.push(`${row.pending} pinned change${row.pending === 1 ? '' : 's'} pending`);
  facts.push(...guardFacts(row.guards ?? []));
  const breaker = BREAKER_TEXT[row.breaker ?? 'closed'];
  const lastError = row.last_error;
  return h(
    'li',
    { class: 'health-chip', 'data-source': row.name, 'data-state': row.state, title: compact ? facts.join(' · ') : null },
    h(
      'button',
      { type: 'button', class: 'link chip-name', onclick: () => onPick(row), disabled: row.tools.length === 0, title: `Show the tools of ${row.name}` },
      row.name,
    ),
    ' ',
    stateBadge(row.state),
    row.pending > 0 ? [' ', h('span', { class: 'badge warn' }, 'changes pending')] : null,
    breaker ? [' ', h('span', { class: `badge ${row.breaker === 'open' ? 'bad' : 'warn'}`, 'data-breaker': row.breaker }, breaker)] : null,
    compact ? null : h('span', { class: 'chip-facts muted small' }, facts.join(' · ')),
    row.reason && row.state === 'down' ? h('span', { class: 'chip-error small' }, row.reason) : null,
    lastError && !compact ? h('span', { class: 'chip-error small' }, `Last error ${clockTime(lastError.at)}: ${lastError.code} — ${lastError.detail}`) : null,
  );
}
