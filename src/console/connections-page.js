// My connections: the accounts and keys this caller (an API key, or the signed-in user) has given
// toolport for its tools — name, kind, scopes, expiry, never a token or value (GET /me/connections).
// Connect an account through a single-use link opened in a new tab, enter a secret's value, or forget
// one. The list is asked again when the tab comes back into view, and every few seconds while a link is open.
import { problemText, request } from './api.js';
import { add, clockTime, h, notice, uid } from './dom.js';

const LINK_POLL_MS = 3000;

/** Whether this toolport declares credentials (the page is shown only then). */
export async function hasConnections() {
  const answer = await request('/me/connections');
  return answer.ok && answer.data.available.length > 0;
}

export function createConnectionsPage(section) {
  const status = h('p', { class: 'muted small', role: 'status', id: 'connections-status' });
  const outcome = h('p', { class: 'outcome', role: 'status', id: 'connections-outcome' });
  const refreshButton = h('button', { type: 'button', class: 'small', onclick: () => void refresh() }, 'Refresh');
  const list = h('div', { id: 'connections-list', class: 'connections' });
  add(
    section,
    h(
      'p',
      { class: 'muted' },
      "Accounts and keys that tools use on your behalf. toolport keeps them encrypted and sends each only with your own calls; this page never shows a token or a secret's value.",
    ),
    h('div', { class: 'toolbar' }, refreshButton, status),
    outcome,
    list,
  );

  /** The cards shown, by credential name, with what they were built from (a card typing a value survives refreshes). */
  const cards = new Map();
  let visible = false;
  let linkTimer = null;

  async function refresh() {
    const answer = await request('/me/connections');
    if (!answer.ok) {
      status.textContent = problemText(answer);
      return;
    }
    const { connections, available } = answer.data;
    if (available.length === 0) {
      list.replaceChildren(notice('This toolport declares no credentials: no tool needs an account or key of yours.'));
      return;
    }
    const connected = new Map(connections.map((c) => [c.name, c]));
    const shown = available.map((definition) => {
      const connection = connected.get(definition.name) ?? null;
      const built = JSON.stringify(connection);
      const card = cards.get(definition.name);
      if (card !== undefined && card.built === built) return card.element;
      const fresh = { built, element: connectionCard(definition, connection) };
      cards.set(definition.name, fresh);
      return fresh.element;
    });
    list.replaceChildren(...shown);
    status.textContent = `${connections.length} of ${available.length} connected · updated ${clockTime(new Date().toISOString())}`;
  }

  async function act(promise, done) {
    const answer = await promise;
    outcome.textContent = answer.ok ? done : problemText(answer);
    outcome.classList.toggle('error', !answer.ok);
    void refresh();
    return answer;
  }

  function connectionCard(definition, connection) {
    const { name, type } = definition;
    const titleId = uid('connection');
    const path = encodeURIComponent(name);
    const forget = h('button', { type: 'button', class: 'danger' }, 'Forget');
    forget.addEventListener('click', () => {
      if (!confirm(`Forget ${name}? Tools that need it will ask you to connect again.`)) return;
      void act(request(`/me/connections/${path}`, { method: 'DELETE' }), `Forgot ${name}.`);
    });
    return h(
      'article',
      { class: 'panel connection', 'data-credential': name, 'data-connected': String(connection !== null), 'aria-labelledby': titleId },
      h('h2', { id: titleId }, h('code', {}, name), ' ', h('span', { class: `badge ${connection ? 'ok' : ''}` }, connection ? 'connected' : 'not connected')),
      h(
        'dl',
        { class: 'facts' },
        [
          ['Kind', type === 'oauth2' ? 'an account, connected by signing in (OAuth)' : 'a value you enter (a key or password)'],
          connection && type === 'oauth2' ? ['Scopes', connection.scopes.length > 0 ? connection.scopes.join(' ') : '—'] : null,
          connection && type === 'oauth2'
            ? ['Access until', connection.expires_at ? `${new Date(connection.expires_at).toLocaleString()} (renewed before then)` : 'no expiry given']
            : null,
          connection ? ['Updated', new Date(connection.updated_at).toLocaleString()] : null,
        ]
          .filter(Boolean)
          .map(([k, v]) => [h('dt', {}, k), h('dd', { 'data-fact': k.toLowerCase() }, v)]),
      ),
      type === 'oauth2' ? connectControls(name, connection !== null) : secretForm(name, connection !== null),
      connection ? forget : null,
    );
  }

  function connectControls(name, connected) {
    const place = h('div', { class: 'connect-link', 'aria-live': 'polite' });
    const connect = h('button', { type: 'button', class: connected ? '' : 'primary' }, connected ? 'Connect again' : 'Connect');
    connect.addEventListener('click', async () => {
      const answer = await act(request(`/me/connections/${encodeURIComponent(name)}/link`, { method: 'POST' }), '');
      if (!answer.ok) return;
      const shownUntil = clockTime(answer.data.expires_at).slice(0, 5);
      place.replaceChildren(
        h('a', { href: answer.data.url, target: '_blank', rel: 'noopener noreferrer', class: 'button primary' }, `Sign in to ${name}`),
        h('span', { class: 'muted small' }, ` A link for you only: it works once, until ${shownUntil}. This page updates once you are done.`),
      );
      // Asked again until the link has expired (or the page is left).
      const until = Date.parse(answer.data.expires_at);
      clearInterval(linkTimer);
      linkTimer = setInterval(() => {
        if (Date.now() > until) clearInterval(linkTimer);
        else if (visible) void refresh();
      }, LINK_POLL_MS);
    });
    return h('div', { class: 'buttons' }, connect, place);
  }

  function secretForm(name, connected) {
    const id = uid('secret');
    const input = h('input', { id, type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, maxlength: 8192 });
    const form = h(
      'form',
      { class: 'stack secret-form', 'aria-label': `Value of ${name}` },
      h('div', { class: 'field' }, h('label', { for: id }, connected ? `A new value for ${name}` : `Your value for ${name}`), input),
      h('div', {}, h('button', { type: 'submit', class: 'primary' }, 'Save')),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = input.value;
      if (value === '') return;
      input.value = '';
      void act(request(`/me/credentials/${encodeURIComponent(name)}`, { method: 'PUT', body: { value } }), `Saved ${name}.`);
    });
    return form;
  }

  document.addEventListener('visibilitychange', () => {
    if (visible && document.visibilityState === 'visible') void refresh();
  });

  return {
    enter() {
      visible = true;
      void refresh();
    },
    leave() {
      visible = false;
      clearInterval(linkTimer);
    },
  };
}
