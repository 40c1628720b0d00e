// Unknown outcomes on the Ledger page: runs lost after they started, which may or may not have had
// their effect. Each is settled by a person: "it ran" (with what it answered, replayed from then on)
// or "it did not run" (the next identical call runs).
import { problemText, request } from './api.js';
import { h, notice } from './dom.js';

export function createUnknownOutcomes() {
  const list = h('div', { 'aria-live': 'polite' });
  const panel = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'unknown-title' },
    h('h2', { id: 'unknown-title' }, 'Unknown outcomes'),
    h('p', { class: 'muted' }, 'Runs lost after they started: nothing runs under these keys until you say whether the effect happened.'),
    list,
  );

  function resolve(entry, body, row) {
    return request(`/ledger/effects/${encodeURIComponent(entry.idempotency_key)}/resolve`, { method: 'POST', body }).then((answer) => {
      row.replaceChildren(
        answer.ok
          ? notice(body.outcome === 'ran' ? 'Recorded as run: identical calls replay it.' : 'Recorded as not run: the next identical call runs.')
          : notice(problemText(answer), 'alert'),
      );
    });
  }

  function ranForm(entry, row) {
    const message = h('input', { type: 'text', required: true, 'aria-label': 'What the run answered (message)', placeholder: 'What the run answered' });
    const value = h('textarea', { rows: 3, 'aria-label': 'Its value as JSON (optional)', placeholder: '{"charge_id": "…"} (optional)' });
    const error = h('p', { role: 'alert' });
    const form = h(
      'form',
      { class: 'stack', 'aria-label': `It ran: ${entry.idempotency_key}` },
      message,
      value,
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Record as run')),
      error,
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      let parsed;
      try {
        parsed = value.value.trim() === '' ? null : JSON.parse(value.value);
      } catch {
        error.textContent = 'The value is not JSON.';
        return;
      }
      void resolve(entry, { outcome: 'ran', result: { message: message.value.trim(), value: parsed } }, row);
    });
    return form;
  }

  function rowOf(entry) {
    const row = h('li', { class: 'stack' });
    const ran = h('button', { type: 'button', class: 'primary' }, 'It ran');
    const notRan = h('button', { type: 'button', class: 'danger' }, 'It did not run');
    ran.addEventListener('click', () => row.append(ranForm(entry, row)));
    notRan.addEventListener('click', () => {
      if (confirm(`Record that ${entry.tool_name} did not run? The next identical call will run it.`)) void resolve(entry, { outcome: 'not_ran' }, row);
    });
    row.append(
      h('code', {}, entry.idempotency_key),
      h('p', { class: 'muted' }, `${entry.tool_name} · started ${new Date(entry.lost_at).toLocaleString()} · effect ${entry.effect_id}`),
      h('div', { class: 'actions' }, ran, notRan),
    );
    return row;
  }

  async function refresh() {
    const answer = await request('/ledger/unknown');
    if (!answer.ok) return list.replaceChildren(notice(problemText(answer), 'alert'));
    const entries = answer.data.unknown;
    list.replaceChildren(
      entries.length === 0 ? notice('None: every run that started has a recorded outcome.') : h('ul', { class: 'plain' }, ...entries.map(rowOf)),
    );
  }

  return { panel, refresh };
}
