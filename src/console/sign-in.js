// Signing in: when the service asks who calls, the page takes an API key or an access token (a JWT
// from the identity provider; the service verifies it), keeps it in this tab's sessionStorage only,
// and shows who is signed in. A key or token the service refuses brings the form back, saying why.
import { apiKey, problemText, request } from './api.js';
import { clockTime, h } from './dom.js';

const $ = (id) => document.getElementById(id);

/** Why the service refused the key or token, in words a person can act on. */
export function refusedText(problem) {
  const why = problem && typeof problem === 'object' && problem.detail ? ` (${problem.detail})` : '';
  return `Key refused: the service refused this key or token${why}. Sign in again.`;
}

/** Shows the sign-in form, and nothing else, with a message. */
export function askForKey(message) {
  apiKey.clear();
  for (const page of document.querySelectorAll('#main > section.page')) /** @type {HTMLElement} */ (page).hidden = page.id !== 'key-page';
  $('nav').hidden = true;
  $('identity').replaceChildren();
  $('key-error').textContent = message;
  $('key-input').focus();
}

/**
 * Listens to the sign-in form: once the service accepts what was typed, hides the form and calls
 * `signedIn` with the caller (GET /caller).
 * @param {(caller: any) => unknown} signedIn
 */
export function listenForSignIn(signedIn) {
  $('key-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const input = /** @type {HTMLInputElement} */ ($('key-input'));
    const key = input.value.trim();
    if (!key) return;
    apiKey.set(key);
    input.value = '';
    const answer = await request('/caller');
    if (!answer.ok) return askForKey(answer.status === 401 ? refusedText(answer.data) : problemText(answer));
    $('key-page').hidden = true;
    await signedIn(answer.data);
  });
}

/**
 * The expiry of a JWT (its `exp`, read without checking: the service verifies), or null for an API key.
 * @param {string | null} secret
 * @returns {Date | null}
 */
export function tokenExpiry(secret) {
  const parts = (secret ?? '').split('.');
  if (parts.length !== 3) return null;
  try {
    const claims = JSON.parse(atob(parts[1].replace(/-/g, '+').replace(/_/g, '/')));
    return typeof claims.exp === 'number' ? new Date(claims.exp * 1000) : null;
  } catch {
    return null;
  }
}

/** Who is signed in (a user of a token, or an API key), with Sign out. */
export function renderIdentity(box, caller) {
  if (!caller.keys_required) return box.replaceChildren(h('span', { class: 'muted' }, 'No API keys: everything is visible'));
  const signOut = h('button', { type: 'button', class: 'small link' }, 'Sign out');
  signOut.addEventListener('click', () => {
    apiKey.clear();
    location.reload();
  });
  const user = typeof caller.id === 'string' && caller.id.startsWith('user:') ? caller.id.slice('user:'.length) : null;
  const expires = tokenExpiry(apiKey.get());
  box.replaceChildren(
    h(
      'span',
      {},
      user === null ? 'Key ' : 'Signed in as ',
      h('strong', {}, user ?? caller.id),
      caller.admin ? h('span', { class: 'badge ok' }, 'admin') : null,
      expires ? h('span', { class: 'muted small' }, ` · token until ${clockTime(expires.toISOString()).slice(0, 5)}`) : null,
    ),
    ' ',
    signOut,
  );
}
