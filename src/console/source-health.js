// The health strip: one chip per upstream behind the catalog (OpenAPI documents, MCP servers, the
// HTTP tools), from GET /sources — up, degraded, down or not called yet, its last error, and pinned
// changes waiting for an admin.
import { clockTime, h } from './dom.js';

/** Kinds of source that have an upstream to be healthy or not (built-ins and plugins run inside). */
const UPSTREAM_KINDS = new Set(['openapi', 'mcp', 'http']);

/** From this many upstreams, healthy chips show only their name and state. */
const COMPACT_FROM = 4;

const STATE_TEXT = { up: 'up', degraded: 'degraded', down: 'down', unknown: 'not called yet' };

/**
 * @typedef {{ name: string, kind: string, tools: string[], state: 'up' | 'degraded' | 'down' | 'unknown',
 *   reason: string | null, calls: number, failures: number, pending: number,
 *   last_error: { code: string, detail: string, at: string } | null }} SourceRow
 */

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
  return upstreams.map((row) => healthChip(row, onPick, compact && (row.state === 'up' || row.state === 'unknown') && row.pending === 0));
}

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** @param {SourceRow} row @param {(row: SourceRow) => void} onPick @param {boolean} compact */
function healthChip(row, onPick, compact) {
  const facts = [`${row.kind === 'http' ? 'HTTP tools' : row.kind === 'mcp' ? 'MCP server' : 'OpenAPI'} · ${plural(row.tools.length, 'tool')}`];
  if (row.calls > 0)
    facts.push(row.failures === 0 ? `last ${plural(row.calls, 'call')} answered` : `${row.failures} of the last ${plural(row.calls, 'call')} failed`);
  if (row.pending > 0) facts.push(`${row.pending} pinned change${row.pending === 1 ? '' : 's'} pending`);
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
    compact ? null : h('span', { class: 'chip-facts muted small' }, facts.join(' · ')),
    row.reason && row.state === 'down' ? h('span', { class: 'chip-error small' }, row.reason) : null,
    lastError && !compact ? h('span', { class: 'chip-error small' }, `Last error ${clockTime(lastError.at)}: ${lastError.code} — ${lastError.detail}`) : null,
  );
}
