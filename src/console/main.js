// The console's entry point: asks for an API key or token when the service wants one, learns what it
// may do (GET /caller), then shows one page at a time, chosen by the URL's #fragment.
import { apiKey, problemText, request, UNAUTHORIZED } from './api.js';
import { createApprovalsPage } from './approvals-page.js';
import { createAuditPage } from './audit-page.js';
import { createCallsPage } from './calls-page.js';
import { h } from './dom.js';
import { createConnectionsPage, hasConnections } from './connections-page.js';
import { CallFeed } from './feed.js';
import { createLedgerPage } from './ledger-page.js';
import { createSessionsPage } from './sessions-page.js';
import { askForKey, listenForSignIn, refusedText, renderIdentity } from './sign-in.js';
import { showServiceState } from './status.js';
import { createTasksPage, hasTasks } from './tasks-page.js';
import { createToolsPage } from './tools-page.js';

const PAGES = ['tools', 'calls', 'sessions', 'tasks', 'approvals', 'connections', 'ledger', 'audit'];
const $ = (id) => document.getElementById(id);

let pages = null;
let active = null;

async function start() {
  const answer = await request('/caller');
  $('loading').hidden = true;
  if (answer.status === 401) return askForKey(apiKey.get() ? refusedText(answer.data) : '');
  if (answer.status === 0) return; // the banner says so, and starts again once the service answers
  if (!answer.ok) {
    $('main').append(h('p', { class: 'error', role: 'alert' }, `The console cannot reach toolport: ${problemText(answer)}`));
    return;
  }
  await openConsole(answer.data);
}

// A fresh start with the new key: every page is built for what it may see.
listenForSignIn((caller) => (pages === null ? openConsole(caller) : location.reload()));

window.addEventListener(UNAUTHORIZED, (event) => {
  if (pages === null) return;
  // The key or token stopped working (revoked, expired): the page stops and asks again.
  pages[active]?.leave?.();
  active = null;
  askForKey(refusedText(/** @type {CustomEvent} */ (event).detail));
});

showServiceState($('service-state'), () => void (pages === null ? start() : route()));

/** What the catalog needs of each tool up front (a tool's whole definition is read when it is opened). */
const CATALOG_FIELDS = 'name,description,source,idempotency,annotations';

async function openConsole(caller) {
  const feed = new CallFeed();
  const [tools, tasksAvailable, connectionsAvailable] = await Promise.all([request(`/tools?fields=${CATALOG_FIELDS}`), hasTasks(), hasConnections()]);
  const context = { caller, feed, tools, tasksAvailable };
  renderIdentity($('identity'), caller);
  feed.start();
  pages = {
    tools: createToolsPage($('page-tools'), context),
    calls: createCallsPage($('page-calls'), context),
    sessions: createSessionsPage($('page-sessions'), context),
    tasks: createTasksPage($('page-tasks'), context),
    approvals: createApprovalsPage($('page-approvals'), context),
    connections: createConnectionsPage($('page-connections')),
    ledger: createLedgerPage($('page-ledger'), context),
    audit: createAuditPage($('page-audit'), context),
  };
  const nav = $('nav');
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="tasks"]')).hidden = !context.tasksAvailable;
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="ledger"]')).hidden = !caller.admin;
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="audit"]')).hidden = !caller.admin;
  /** @type {HTMLElement} */ (nav.querySelector('[data-page="connections"]')).hidden = !connectionsAvailable;
  nav.hidden = false;
  window.addEventListener('hashchange', () => void route());
  await route();
}

async function route() {
  if (!$('key-page').hidden) return; // signed out: nothing shows until a key or token is accepted
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
