// The console's entry point: asks for an API key when the service wants one, learns what the key
// may do (GET /caller), then shows one page at a time, chosen by the URL's #fragment.
import { apiKey, problemText, request, UNAUTHORIZED } from './api.js';
import { createCallsPage } from './calls-page.js';
import { h } from './dom.js';
import { CallFeed } from './feed.js';
import { createLedgerPage } from './ledger-page.js';
import { createSessionsPage } from './sessions-page.js';
import { createTasksPage, hasTasks } from './tasks-page.js';
import { createToolsPage } from './tools-page.js';

const PAGES = ['tools', 'calls', 'sessions', 'tasks', 'ledger'];
const $ = (id) => document.getElementById(id);

let pages = null;
let active = null;

async function start() {
  const answer = await request('/caller');
  $('loading').hidden = true;
  if (answer.status === 401) return askForKey(apiKey.get() ? 'The service refused this key.' : '');
  if (!answer.ok) {
    $('main').append(h('p', { class: 'error', role: 'alert' }, `The console cannot reach toolport: ${problemText(answer)}`));
    return;
  }
  await openConsole(answer.data);
}

function askForKey(message) {
  apiKey.clear();
  for (const name of PAGES) $(`page-${name}`).hidden = true;
  $('nav').hidden = true;
  $('key-page').hidden = false;
  $('key-error').textContent = message;
  $('key-input').focus();
}

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($('key-input'));
  const key = input.value.trim();
  if (!key) return;
  apiKey.set(key);
  input.value = '';
  const answer = await request('/caller');
  if (!answer.ok) return askForKey(answer.status === 401 ? 'The service refused this key.' : problemText(answer));
  $('key-page').hidden = true;
  // A fresh start with the key: every page is built for what this key may see.
  if (pages !== null) return location.reload();
  await openConsole(answer.data);
});

window.addEventListener(UNAUTHORIZED, () => {
  if (pages !== null) location.reload(); // the key stopped working: start over (it asks again)
});

async function openConsole(caller) {
  const feed = new CallFeed();
  const [tools, tasksAvailable] = await Promise.all([request('/tools'), hasTasks()]);
  const context = { caller, feed, tools, tasksAvailable };
  renderIdentity(caller);
  feed.start();
  pages = {
    tools: createToolsPage($('page-tools'), context),
    calls: createCallsPage($('page-calls'), context),
    sessions: createSessionsPage($('page-sessions'), context),
    tasks: createTasksPage($('page-tasks'), context),
    ledger: createLedgerPage($('page-ledger'), context),
  };
  const nav = $('nav');
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="tasks"]')).hidden = !context.tasksAvailable;
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="ledger"]')).hidden = !caller.admin;
  nav.hidden = false;
  window.addEventListener('hashchange', () => void route());
  await route();
}

function renderIdentity(caller) {
  const box = $('identity');
  if (!caller.keys_required) return box.replaceChildren(h('span', { class: 'muted' }, 'No API keys: everything is visible'));
  const forget = h('button', { type: 'button', class: 'small link' }, 'Forget key');
  forget.addEventListener('click', () => {
    apiKey.clear();
    location.reload();
  });
  box.replaceChildren(h('span', {}, 'Key ', h('strong', {}, caller.id), caller.admin ? h('span', { class: 'badge ok' }, 'admin') : null), ' ', forget);
}

async function route() {
  const [name, ...rest] = location.hash.replace(/^#/, '').split('/');
  const page = PAGES.includes(name) ? name : 'tools';
  const param = rest.length > 0 ? rest.join('/') : undefined;
  if (active !== page) {
    pages[active]?.leave?.();
    for (const each of PAGES) $(`page-${each}`).hidden = each !== page;
    for (const link of $('nav').querySelectorAll('a')) {
      if (link.dataset.page === page) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${page[0].toUpperCase()}${page.slice(1)} · toolport console`;
    active = page;
  }
  await pages[page].enter(param);
}

void start();
