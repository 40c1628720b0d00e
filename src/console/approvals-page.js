// Approvals: calls held for a person, live (asked again every 2 s while shown, and at once when the
// call feed shows a held call), each with its tool, arguments, caller, session and rule. A key that
// may decide approves, denies, or first edits the arguments in the tool's own form, the change shown
// against what was asked. #approvals/<id> shows one approval (the link a webhook message can carry).
import { problemText, request } from './api.js';
import { argumentDiff } from './args-diff.js';
import { add, clockTime, h, jsonBlock, notice, uid } from './dom.js';
import { field, schemaForm } from './schema-form.js';

const POLL_MS = 2000;
const BADGE = { pending: 'warn', approved: 'ok', executed: 'ok', denied: 'bad', expired: 'bad' };
const FILTERS = [
  ['pending', 'Pending'],
  ['', 'All'],
  ['approved', 'Approved'],
  ['executed', 'Executed'],
  ['denied', 'Denied'],
  ['expired', 'Expired'],
];

export function createApprovalsPage(section, { feed }) {
  const filter = h('select', { id: 'approvals-filter' }, ...FILTERS.map(([value, text]) => h('option', { value }, text)));
  const status = h('p', { class: 'muted small', role: 'status', id: 'approvals-status' });
  const outcome = h('p', { class: 'outcome', role: 'status', id: 'approvals-outcome' });
  const back = h('p', { hidden: true }, h('a', { href: '#approvals' }, 'All approvals'));
  const empty = h('p', { class: 'muted', hidden: true }, 'Nothing here: no call waits for a decision that this key may see.');
  const list = h('div', { id: 'approvals-list', class: 'approvals' });
  add(
    section,
    h('div', { class: 'toolbar' }, h('div', { class: 'field' }, h('label', { for: 'approvals-filter' }, 'Show'), filter), status),
    back,
    outcome,
    empty,
    list,
  );

  /** The cards shown, by approval id: an open editor survives the refreshes until its approval changes. */
  const cards = new Map();
  let only = null;
  let timer = null;
  let soon = null;
  let visible = false;

  /** The number of approvals this key may decide now, on the page's link in the navigation. */
  const link = document.querySelector('#nav [data-page="approvals"]');
  const count = h('span', { class: 'badge warn count', hidden: true });
  link?.append(count);
  async function countPending() {
    const answer = await request('/approvals?status=pending&limit=200');
    if (answer.ok) showCount(answer.data.approvals);
  }
  function showCount(records) {
    const waiting = records.filter((r) => r.status === 'pending' && r.may_decide).length;
    count.hidden = waiting === 0;
    count.textContent = String(waiting);
    count.setAttribute('aria-label', `${waiting} waiting for your decision`);
  }

  async function refresh() {
    const path = only !== null ? `/approvals/${encodeURIComponent(only)}` : `/approvals?limit=100${filter.value ? `&status=${filter.value}` : ''}`;
    const answer = await request(path);
    if (!answer.ok) {
      status.textContent = answer.status === 404 && only !== null ? `No approval ${only} that this key may see.` : problemText(answer);
      if (answer.status === 404) show([]);
      return;
    }
    const records = only !== null ? [answer.data] : answer.data.approvals;
    show(records);
    if (only === null && filter.value === 'pending') showCount(records);
    const kind = only === null && filter.value ? `${filter.value} ` : '';
    status.textContent = `${records.length} ${kind}approval${records.length === 1 ? '' : 's'} · updated ${clockTime(new Date().toISOString())}`;
  }

  function refreshSoon() {
    soon ??= setTimeout(() => {
      soon = null;
      void refresh();
    }, 100);
  }

  /** Newest first; a card is rebuilt only when its approval changed. */
  function show(records) {
    const ids = new Set(records.map((r) => r.approval_id));
    for (const [id, card] of cards) {
      if (ids.has(id)) continue;
      // Decided by someone else while this page had it open: say so rather than drop it silently.
      if (card.record.status === 'pending' && card.element.querySelector('form.edit-arguments'))
        outcome.textContent = `Approval ${id} (${card.record.tool}) was decided elsewhere; open All to see how.`;
      card.element.remove();
      cards.delete(id);
    }
    let previous = null;
    for (const record of records) {
      let card = cards.get(record.approval_id);
      if (card !== undefined && (card.record.status !== record.status || card.record.may_decide !== record.may_decide)) {
        const fresh = approvalCard(record);
        card.element.replaceWith(fresh.element);
        card = fresh;
      }
      card ??= approvalCard(record);
      cards.set(record.approval_id, card);
      if (previous === null) {
        if (list.firstElementChild !== card.element) list.prepend(card.element);
      } else if (previous.nextElementSibling !== card.element) previous.after(card.element);
      previous = card.element;
    }
    empty.hidden = records.length > 0;
  }

  function approvalCard(record) {
    const titleId = uid('approval');
    const element = h(
      'article',
      { class: 'panel approval', 'data-approval': record.approval_id, 'data-status': record.status, 'aria-labelledby': titleId },
      h('h2', { id: titleId }, h('code', {}, record.tool), ' ', h('span', { class: `badge ${BADGE[record.status] ?? ''}` }, record.status)),
      facts(record),
      h('h3', {}, record.requested_arguments ? 'Arguments, as edited by the approver' : 'Arguments'),
      jsonBlock(record.arguments, `arguments of ${record.tool}`),
      record.requested_arguments ? argumentDiff(record.requested_arguments, record.arguments) : null,
      record.status === 'pending' ? actions(record, titleId) : null,
    );
    return { record, element };
  }

  function actions(record, titleId) {
    if (!record.may_decide)
      return notice(`This call was asked with this key: it may read the approval but not decide it. Deciding: ${record.approvers.join(', ') || 'admin keys'}.`);
    const noteId = uid('note');
    const note = h('input', { id: noteId, type: 'text', maxlength: 2000, autocomplete: 'off' });
    const problem = h('p', { class: 'error', role: 'alert' });
    const editor = h('div', { class: 'editor', hidden: true });
    const decide = async (body) => {
      problem.textContent = '';
      const text = note.value.trim();
      const answer = await request(`/approvals/${encodeURIComponent(record.approval_id)}/decision`, {
        method: 'POST',
        body: { ...body, ...(text && { note: text }) },
      });
      if (!answer.ok) {
        problem.textContent = problemText(answer);
        return;
      }
      editor.replaceChildren(); // decided here: its card goes without a word of "elsewhere"
      const edited = answer.data.decision?.arguments_edited ? ' with edited arguments' : '';
      outcome.textContent = `${answer.data.status === 'denied' ? 'Denied' : 'Approved'} ${record.tool}${edited} (approval ${record.approval_id}).`;
      void refresh();
    };
    const edit = h('button', { type: 'button' }, 'Edit arguments…');
    edit.addEventListener('click', () => {
      edit.disabled = true;
      void openEditor(record, editor, decide);
    });
    return h(
      'div',
      { class: 'decide stack' },
      h('div', { class: 'field' }, h('label', { for: noteId }, 'Note (optional, the model reads it when you deny)'), note),
      h(
        'div',
        { class: 'buttons' },
        h('button', { type: 'button', class: 'primary', 'aria-describedby': titleId, onclick: () => void decide({ decision: 'approve' }) }, 'Approve'),
        h('button', { type: 'button', class: 'danger', 'aria-describedby': titleId, onclick: () => void decide({ decision: 'deny' }) }, 'Deny'),
        edit,
      ),
      problem,
      editor,
    );
  }

  /** The tool's form (or JSON, when this key cannot read the tool), filled with the arguments; the change shown as it is made. */
  async function openEditor(record, editor, decide) {
    editor.hidden = false;
    editor.replaceChildren(notice("Loading the tool's form…"));
    const tool = await request(`/tools/${encodeURIComponent(record.tool)}`);
    const form = tool.ok && tool.data.parameters ? schemaForm(tool.data.parameters) : field({}, 'arguments', { required: true });
    form.fill(record.arguments);
    const diff = h('div', { class: 'diff-live', 'aria-live': 'polite' });
    const errors = h('p', { class: 'error', role: 'alert' });
    const update = () => {
      const got = form.read();
      errors.textContent = got.errors.join('; ');
      if (got.errors.length === 0) diff.replaceChildren(argumentDiff(record.arguments, got.value ?? {}));
    };
    const element = h(
      'form',
      { class: 'stack edit-arguments', 'aria-label': `Edit the arguments of ${record.tool}` },
      tool.ok ? null : notice(`The tool's form is not available to this key (${problemText(tool)}): edit the arguments as JSON.`),
      form.element,
      h('h3', {}, 'Changes'),
      diff,
      errors,
      h('div', { class: 'buttons' }, h('button', { type: 'submit', class: 'primary' }, 'Approve with these arguments')),
    );
    element.addEventListener('input', update);
    element.addEventListener('change', update);
    element.addEventListener('click', (event) => {
      if (/** @type {HTMLElement} */ (event.target).closest('button[type="button"]')) setTimeout(update); // an item added or removed
    });
    element.addEventListener('submit', (event) => {
      event.preventDefault();
      const got = form.read();
      errors.textContent = got.errors.join('; ');
      if (got.errors.length === 0) void decide({ decision: 'approve', arguments: got.value ?? {} });
    });
    editor.replaceChildren(element);
    update();
    form.focus?.();
  }

  filter.addEventListener('change', () => {
    outcome.textContent = '';
    void refresh();
  });
  feed.addEventListener('call', (event) => {
    if (!/^approval_/.test(event.detail.error_code ?? '')) return;
    if (visible) refreshSoon();
    else void countPending();
  });
  void countPending();

  return {
    enter(param) {
      visible = true;
      only = param ? decodeURIComponent(param) : null;
      back.hidden = only === null;
      filter.disabled = only !== null;
      clearInterval(timer);
      timer = setInterval(() => void refresh(), POLL_MS);
      void refresh();
    },
    leave() {
      visible = false;
      clearInterval(timer);
    },
  };
}

/** Who asked, in which session, under which rule, who decides, and until when. */
function facts(record) {
  const rows = [
    ['Caller', record.caller ?? '—'],
    record.user ? ['User', record.user] : null,
    ['Session', record.session_id ? h('a', { href: `#sessions/${encodeURIComponent(record.session_id)}` }, record.session_id) : '—'],
    ['Rule', record.rule === null ? "the tool's own approval" : `policy[${record.rule}]`],
    ['Approvers', record.approvers.length > 0 ? record.approvers.join(', ') : 'admin keys'],
    ['Asked', new Date(record.created_at).toLocaleString()],
    [record.status === 'pending' ? 'Expires' : 'Expiry', new Date(record.expires_at).toLocaleString()],
    record.decision
      ? ['Decided', `${record.decision.by} · ${new Date(record.decision.at).toLocaleString()}${record.decision.note ? ` · “${record.decision.note}”` : ''}`]
      : null,
    ['Approval', h('code', {}, record.approval_id)],
  ].filter(Boolean);
  return h(
    'dl',
    { class: 'facts' },
    rows.map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-fact': k.toLowerCase() }, v)]),
  );
}
