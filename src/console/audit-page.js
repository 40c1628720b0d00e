// The audit log, for admin keys: entries newest first, filtered by kind, tool, caller and outcome,
// a page at a time. Other keys see only why there is nothing here.
import { problemText, request } from './api.js';
import { add, clockTime, h, notice } from './dom.js';

const KINDS = ['call', 'policy', 'guardrail', 'approval', 'credential', 'admin'];
const PAGE = 100;

export function createAuditPage(section, context) {
  if (!context.caller.admin) {
    add(section, notice('Reading the audit log needs an admin key.'));
    return { enter() {} };
  }
  const kind = h(
    'select',
    { id: 'audit-kind' },
    h('option', { value: '' }, 'any'),
    KINDS.map((k) => h('option', { value: k }, k)),
  );
  const field = (id, label, placeholder) => {
    const input = h('input', { id, type: 'search', autocomplete: 'off', spellcheck: 'false', placeholder });
    return [input, h('div', { class: 'field' }, h('label', { for: id }, label), input)];
  };
  const [tool, toolField] = field('audit-tool', 'Tool', 'exact name');
  const [caller, callerField] = field('audit-caller', 'Caller', 'key id or user:<sub>');
  const [outcome, outcomeField] = field('audit-outcome', 'Outcome', 'success, policy_denied, approved…');
  const form = h(
    'form',
    { class: 'toolbar', 'aria-label': 'Filter the audit log' },
    h('div', { class: 'field' }, h('label', { for: 'audit-kind' }, 'Kind'), kind),
    toolField,
    callerField,
    outcomeField,
    h('button', { type: 'submit', class: 'primary' }, 'Show'),
  );
  const status = h('p', { role: 'status', class: 'muted' });
  const body = h('tbody', {});
  const more = h('button', { type: 'button', hidden: true }, 'Older entries');
  const columns = ['#', 'Time', 'Kind', 'Who', 'What', 'Rule', 'Approval', 'Outcome'];
  const table = h(
    'table',
    { class: 'calls', id: 'audit-table' },
    h('caption', { class: 'visually-hidden' }, 'Audit entries, newest first'),
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
  add(section, form, status, h('div', { class: 'table-wrap', tabindex: 0, role: 'region', 'aria-label': 'Audit entries' }, table), more);

  let cursor = null;

  function row(entry) {
    const who = [
      entry.caller ?? '—',
      entry.user && entry.user !== entry.caller ? ` (${entry.user})` : '',
      entry.on_behalf_of ? ` for ${entry.on_behalf_of}` : '',
    ].join('');
    const what = entry.tool ?? entry.detail ?? '';
    return h(
      'tr',
      {},
      h('td', { class: 'num', title: `hash ${entry.hash}` }, String(entry.seq)),
      h('td', {}, h('time', { datetime: entry.at, title: entry.at }, clockTime(entry.at))),
      h('td', {}, entry.kind),
      h('td', {}, who),
      h('td', { title: entry.arguments_hash ? `arguments ${entry.arguments_hash}` : undefined }, what),
      h('td', {}, entry.rule ?? ''),
      h('td', {}, entry.approval_id ? h('a', { href: `#approvals/${encodeURIComponent(entry.approval_id)}` }, entry.approval_id) : ''),
      h('td', {}, entry.outcome),
    );
  }

  function query() {
    const params = new URLSearchParams({ limit: String(PAGE) });
    for (const [name, input] of [
      ['kind', kind],
      ['tool', tool],
      ['caller', caller],
      ['outcome', outcome],
    ]) {
      const value = input.value.trim();
      if (value) params.set(name, value);
    }
    if (cursor !== null) params.set('cursor', String(cursor));
    return params;
  }

  async function load(fresh) {
    if (fresh) {
      cursor = null;
      body.replaceChildren();
    }
    const answer = await request(`/audit?${query()}`);
    if (!answer.ok) {
      status.textContent = problemText(answer);
      return;
    }
    body.append(...answer.data.entries.map(row));
    cursor = answer.data.next_cursor;
    more.hidden = cursor === null;
    const shown = body.children.length;
    status.textContent = shown === 0 ? 'No entries match.' : `${shown} entr${shown === 1 ? 'y' : 'ies'}${cursor === null ? '' : ', more below'}.`;
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void load(true);
  });
  more.addEventListener('click', () => void load(false));

  return {
    enter() {
      void load(true);
    },
  };
}
