// The effect ledger, for admin keys: settle unknown outcomes, look up an entry by its idempotency
// key and invalidate it, a tool's entries or a scope's. Other keys see only why there is nothing here.
import { problemText, request } from './api.js';
import { add, h, jsonBlock, notice } from './dom.js';
import { createUnknownOutcomes } from './unknown-outcomes.js';

export function createLedgerPage(section, context) {
  if (!context.caller.admin) {
    add(section, notice('Looking up and invalidating ledger entries needs an admin key.'));
    return { enter() {} };
  }
  const keyInput = h('input', { id: 'ledger-key', type: 'text', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'global:tool:…' });
  const found = h('div', { 'aria-live': 'polite' });
  const lookup = h(
    'form',
    { class: 'stack', 'aria-label': 'Look up a ledger entry' },
    h('div', { class: 'field' }, h('label', { for: 'ledger-key' }, 'Idempotency key'), keyInput),
    h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Look up')),
    found,
  );

  const toolSelect = h('select', { id: 'ledger-tool' });
  const toolOutcome = h('p', { role: 'status', class: 'muted' });
  const byTool = h(
    'form',
    { class: 'stack', 'aria-label': "Invalidate a tool's entries" },
    h('div', { class: 'field' }, h('label', { for: 'ledger-tool' }, 'Tool'), toolSelect),
    h('div', {}, h('button', { type: 'submit', class: 'danger' }, 'Invalidate every entry of this tool')),
    toolOutcome,
  );

  const scopeInput = h('input', {
    id: 'ledger-scope',
    type: 'text',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    placeholder: 'global, session:<id> or key:<API key id>',
  });
  const scopeOutcome = h('p', { role: 'status', class: 'muted' });
  const byScope = h(
    'form',
    { class: 'stack', 'aria-label': "Invalidate a scope's entries" },
    h('div', { class: 'field' }, h('label', { for: 'ledger-scope' }, 'Scope'), scopeInput),
    h('div', {}, h('button', { type: 'submit', class: 'danger' }, 'Invalidate every entry of this scope')),
    scopeOutcome,
  );

  const unknown = createUnknownOutcomes();
  add(
    section,
    unknown.panel,
    h('section', { class: 'panel', 'aria-labelledby': 'lookup-title' }, h('h2', { id: 'lookup-title' }, 'Look up an entry'), lookup),
    h(
      'div',
      { class: 'pair' },
      h('section', { class: 'panel', 'aria-labelledby': 'tool-inval-title' }, h('h2', { id: 'tool-inval-title' }, "A tool's entries"), byTool),
      h('section', { class: 'panel', 'aria-labelledby': 'scope-inval-title' }, h('h2', { id: 'scope-inval-title' }, "A scope's entries"), byScope),
    ),
  );

  async function show(key) {
    keyInput.value = key;
    const path = `/ledger/effects/${encodeURIComponent(key)}`;
    const answer = await request(path);
    if (answer.status === 404) return found.replaceChildren(notice('No entry under this key (never recorded, expired or invalidated).'));
    if (!answer.ok) return found.replaceChildren(notice(problemText(answer), 'alert'));
    const record = answer.data;
    const remove = h('button', { type: 'button', class: 'danger' }, 'Invalidate this entry');
    remove.addEventListener('click', async () => {
      if (!confirm(`Invalidate the ledger entry ${key}? The next identical call will run the tool again.`)) return;
      const gone = await request(path, { method: 'DELETE' });
      found.replaceChildren(gone.ok ? notice('The entry was invalidated.') : notice(problemText(gone), 'alert'));
    });
    found.replaceChildren(
      h(
        'dl',
        { class: 'facts' },
        [
          ['Tool', record.tool_name],
          ['Effect', record.effect_id],
          ['Recorded', new Date(record.created_at).toLocaleString()],
          ['Expires', record.expires_at ? new Date(record.expires_at).toLocaleString() : 'never'],
          ['Success', String(record.result_success)],
        ].map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]),
      ),
      h('p', { class: 'message' }, record.result_message),
      jsonBlock(record.result_value, 'recorded result value'),
      remove,
    );
  }

  lookup.addEventListener('submit', (event) => {
    event.preventDefault();
    if (keyInput.value.trim()) void show(keyInput.value.trim());
  });
  byTool.addEventListener('submit', async (event) => {
    event.preventDefault();
    const name = toolSelect.value;
    if (!name || !confirm(`Invalidate every ledger entry of ${name}?`)) return;
    const answer = await request(`/ledger/tools/${encodeURIComponent(name)}`, { method: 'DELETE' });
    toolOutcome.textContent = answer.ok ? `Removed ${answer.data.removed} entr${answer.data.removed === 1 ? 'y' : 'ies'} of ${name}.` : problemText(answer);
  });
  byScope.addEventListener('submit', async (event) => {
    event.preventDefault();
    const scope = scopeInput.value.trim();
    if (!scope || !confirm(`Invalidate every ledger entry of scope ${scope}?`)) return;
    const answer = await request(`/ledger?scope=${encodeURIComponent(scope)}`, { method: 'DELETE' });
    scopeOutcome.textContent = answer.ok ? `Removed ${answer.data.removed} entr${answer.data.removed === 1 ? 'y' : 'ies'} in ${scope}.` : problemText(answer);
  });

  return {
    enter(param) {
      void unknown.refresh();
      const names = (context.tools ?? []).filter((t) => t.idempotency && t.idempotency.strategy !== 'none').map((t) => t.name);
      toolSelect.replaceChildren(...(names.length ? names : (context.tools ?? []).map((t) => t.name)).map((n) => h('option', { value: n }, n)));
      if (param) void show(decodeURIComponent(param));
    },
  };
}
