// Calls: the live feed of recent calls (every replica's, with Redis). Arguments and results are
// in the entries only for admin keys; the server leaves them out for the others.
import { add, clockTime, duration, h, jsonBlock, outcomeBadge } from './dom.js';

const MAX_ROWS = 500;
const STATUS_TEXT = { connecting: 'Connecting…', live: 'Live', offline: 'Disconnected: reconnecting…', refused: 'This key may not read the call feed.' };

export function createCallsPage(section, context) {
  const { feed, caller } = context;
  const filter = h('input', { id: 'calls-filter', type: 'search', autocomplete: 'off', placeholder: 'tool, session, caller or outcome' });
  const pause = h('button', { type: 'button', 'aria-pressed': 'false' }, 'Pause');
  const status = h('p', { class: 'feed-status', role: 'status' });
  const body = h('tbody', {});
  const columns = ['Time', 'Tool', 'Outcome', 'Duration', 'Session', 'Caller', 'Error code'];
  if (caller.admin) columns.push('Details');
  const table = h(
    'table',
    { class: 'calls', id: 'calls-table' },
    h('caption', { class: 'visually-hidden' }, 'Recent calls, newest first'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    body,
  );
  let paused = false;
  let held = [];

  add(
    section,
    h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'calls-filter' }, 'Filter'), filter), pause, status),
    caller.admin ? null : h('p', { class: 'muted' }, 'Arguments and results are shown to admin keys only; this key sees its own calls.'),
    h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Recent calls' }, table),
  );

  const matches = (entry) => {
    const words = filter.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const text = `${entry.tool} ${entry.session ?? ''} ${entry.caller ?? ''} ${entry.outcome} ${entry.parent_call_id ?? ''}`.toLowerCase();
    return words.every((w) => text.includes(w));
  };

  function row(entry) {
    const cells = [
      h('td', {}, h('time', { datetime: entry.at }, clockTime(entry.at))),
      h(
        'td',
        {},
        h('a', { href: `#tools/${encodeURIComponent(entry.tool)}` }, entry.tool),
        // A nested call names the call that made it: a code_run program's calls name their run.
        entry.parent_call_id ? h('span', { class: 'muted small', title: `made by call ${entry.parent_call_id}` }, ` · in ${entry.parent_call_id}`) : null,
      ),
      h('td', {}, outcomeBadge(entry.success ? 'success' : 'failed'), entry.replayed ? h('span', { class: 'badge' }, 'replayed') : null),
      h('td', { class: 'num' }, duration(entry.duration_ms)),
      h('td', {}, entry.session ? h('a', { href: `#sessions/${encodeURIComponent(entry.session)}` }, entry.session) : '—'),
      h('td', {}, entry.caller ?? '—'),
      h('td', {}, entry.error_code ?? ''),
    ];
    const tr = h('tr', { 'data-entry': entry.id, 'data-tool': entry.tool }, cells);
    if (!caller.admin) return [tr];
    const details = h(
      'tr',
      { class: 'details', hidden: true },
      h(
        'td',
        { colspan: columns.length },
        h(
          'div',
          { class: 'pair' },
          h('section', { 'aria-label': 'Arguments' }, h('h4', {}, 'Arguments'), jsonBlock(entry.arguments, 'call arguments')),
          h('section', { 'aria-label': 'Result' }, h('h4', {}, 'Result'), jsonBlock(entry.result, 'call result')),
        ),
        h('p', { class: 'muted small' }, `call ${entry.call_id} · request ${entry.request_id}`),
        entry.result?.idempotency_key
          ? h('p', {}, h('a', { href: `#ledger/${encodeURIComponent(entry.result.idempotency_key)}` }, 'Open its ledger entry'))
          : null,
      ),
    );
    const toggle = h('button', { type: 'button', class: 'small', 'aria-expanded': 'false', 'aria-label': `Details of call ${entry.call_id}` }, 'Show');
    toggle.addEventListener('click', () => {
      details.hidden = !details.hidden;
      toggle.setAttribute('aria-expanded', String(!details.hidden));
      toggle.textContent = details.hidden ? 'Show' : 'Hide';
    });
    tr.append(h('td', {}, toggle));
    return [tr, details];
  }

  function addRow(entry) {
    if (!matches(entry)) return;
    body.prepend(...row(entry));
    while (body.rows.length > MAX_ROWS * (caller.admin ? 2 : 1)) body.lastElementChild.remove();
  }

  function renderAll() {
    body.replaceChildren();
    for (const entry of feed.entries.slice(-MAX_ROWS)) addRow(entry);
    renderStatus();
  }

  function renderStatus() {
    const shown = caller.admin ? body.rows.length / 2 : body.rows.length;
    status.textContent = `${STATUS_TEXT[feed.status] ?? feed.status} · ${shown} call${shown === 1 ? '' : 's'}${paused ? ` · paused (${held.length} waiting)` : ''}`;
    status.dataset.state = feed.status;
  }

  feed.addEventListener('call', (event) => {
    if (paused) held.push(event.detail);
    else addRow(event.detail);
    renderStatus();
  });
  feed.addEventListener('status', renderStatus);
  filter.addEventListener('input', renderAll);
  pause.addEventListener('click', () => {
    paused = !paused;
    pause.setAttribute('aria-pressed', String(paused));
    pause.textContent = paused ? 'Resume' : 'Pause';
    if (!paused) {
      held.forEach(addRow);
      held = [];
    }
    renderStatus();
  });
  renderAll();
  return { enter() {} };
}
