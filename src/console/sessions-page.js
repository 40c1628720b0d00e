// Sessions: a session's plan as a checklist and its events as a timeline, refreshed when the call
// feed shows a call in that session (and every few seconds, for calls this key cannot see).
import { problemText, request } from './api.js';
import { add, clockTime, duration, h, notice, outcomeBadge } from './dom.js';

const POLL_MS = 5000;
const EVENTS_SHOWN = 200;
const STEP_MARK = { done: '✓', in_progress: '◐', pending: '○' };
const STEP_TEXT = { done: 'done', in_progress: 'in progress', pending: 'pending' };

export function createSessionsPage(section, context) {
  const { feed } = context;
  const input = h('input', {
    id: 'session-id',
    name: 'session',
    type: 'text',
    autocomplete: 'off',
    required: true,
    pattern: '[A-Za-z0-9._:\\-]{1,128}',
    spellcheck: 'false',
  });
  const form = h(
    'form',
    { class: 'toolbar', 'aria-label': 'Open a session' },
    h('div', { class: 'field' }, h('label', { for: 'session-id' }, 'Session id'), input),
    h('button', { type: 'submit', class: 'primary' }, 'Open'),
  );
  const seen = h('p', { class: 'muted small' });
  const updated = h('p', { class: 'muted small', role: 'status' });
  const plan = h('section', { class: 'panel plan', 'aria-labelledby': 'plan-title' }, h('h2', { id: 'plan-title' }, 'Plan'));
  const timeline = h('section', { class: 'panel timeline', 'aria-labelledby': 'events-title' }, h('h2', { id: 'events-title' }, 'Events'));
  add(section, form, seen, updated, h('div', { class: 'pair' }, plan, timeline));

  let current = null;
  let timer = null;
  let pending = null;
  let visible = false;

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    if (input.value.trim()) location.hash = `#sessions/${encodeURIComponent(input.value.trim())}`;
  });

  feed.addEventListener('call', (event) => {
    renderSeen();
    if (visible && current !== null && event.detail.session === current) refreshSoon();
  });

  function renderSeen() {
    const ids = [
      ...new Set(
        feed.entries
          .map((e) => e.session)
          .filter(Boolean)
          .reverse(),
      ),
    ].slice(0, 8);
    seen.replaceChildren(
      ...(ids.length === 0
        ? []
        : ['Sessions in recent calls: ', ...ids.flatMap((id, i) => [i > 0 ? ', ' : '', h('a', { href: `#sessions/${encodeURIComponent(id)}` }, id)])]),
    );
  }

  function refreshSoon() {
    pending ??= setTimeout(() => {
      pending = null;
      void refresh();
    }, 100);
  }

  async function refresh() {
    if (current === null) return;
    const id = current;
    const path = `/sessions/${encodeURIComponent(id)}`;
    const [planAnswer, first] = await Promise.all([request(`${path}/plan`), request(`${path}/events?limit=1`)]);
    let events = first;
    if (first.ok && first.data.total > 1) events = await request(`${path}/events?after=${Math.max(0, first.data.total - EVENTS_SHOWN)}&limit=${EVENTS_SHOWN}`);
    if (id !== current) return;
    renderPlan(planAnswer);
    renderEvents(events);
    updated.textContent = `Updated ${clockTime(new Date().toISOString())}`;
  }

  function renderPlan(answer) {
    const title = plan.firstElementChild;
    if (answer.status === 404) return plan.replaceChildren(title, notice('No plan in this session yet.'));
    if (!answer.ok) return plan.replaceChildren(title, notice(problemText(answer), 'alert'));
    const { objective, status, steps } = answer.data;
    const done = steps.filter((s) => s.status === 'done').length;
    plan.replaceChildren(
      title,
      h('p', { class: 'objective' }, objective),
      h('p', {}, h('span', { class: `badge ${status === 'completed' ? 'ok' : ''}` }, status), ` ${done} of ${steps.length} steps done`),
      h(
        'ul',
        { class: 'checklist', id: 'plan-steps' },
        steps.map((step) =>
          h(
            'li',
            { class: `step ${step.status}`, 'data-step': step.step_id, 'data-status': step.status },
            h('span', { class: 'mark', 'aria-hidden': 'true' }, STEP_MARK[step.status] ?? '?'),
            h('span', { class: 'step-title' }, `${step.step_id}. ${step.title}`),
            h('span', { class: 'step-status' }, STEP_TEXT[step.status] ?? step.status),
          ),
        ),
      ),
    );
  }

  function renderEvents(answer) {
    const title = timeline.firstElementChild;
    if (!answer.ok) return timeline.replaceChildren(title, notice(problemText(answer), 'alert'));
    const events = answer.data.events;
    if (events.length === 0) return timeline.replaceChildren(title, notice('No events in this session yet.'));
    timeline.replaceChildren(
      title,
      h(
        'p',
        { class: 'muted small' },
        `${answer.data.total} event${answer.data.total === 1 ? '' : 's'}${answer.data.total > events.length ? `, the newest ${events.length} shown` : ''}`,
      ),
      h(
        'ol',
        { class: 'events', id: 'session-events' },
        events.map((event) =>
          h(
            'li',
            { 'data-seq': event.seq, class: event.success ? null : 'failed' },
            h('time', { datetime: event.at }, clockTime(event.at)),
            h('span', { class: 'event-tool' }, event.tool),
            outcomeBadge(event.success ? 'success' : (event.error_code ?? 'failed')),
            h(
              'span',
              { class: 'muted small' },
              `${duration(event.duration_ms)}${event.caller ? ` · ${event.caller}` : ''}${event.parent_call_id ? ` · nested in ${event.parent_call_id}` : ''}`,
            ),
          ),
        ),
      ),
    );
  }

  renderSeen();
  return {
    enter(param) {
      visible = true;
      const id = param ? decodeURIComponent(param) : null;
      if (id !== current) {
        current = id;
        input.value = id ?? '';
        plan.replaceChildren(plan.firstElementChild, notice(id ? 'Loading…' : 'Open a session to see its plan.'));
        timeline.replaceChildren(timeline.firstElementChild);
        updated.textContent = '';
      }
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
