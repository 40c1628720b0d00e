// Whether toolport answers, shown on every page: a request slower than a moment shows "Loading…";
// a request that gets no answer at all shows "unreachable" until the service answers again (the
// page asks /healthz every few seconds meanwhile and reloads the page shown once it is back).
import { h } from './dom.js';

const LOADING_DELAY_MS = 200;
const RECHECK_MS = 4000;

/** 'change' events whenever `state` changes. */
const changes = new EventTarget();
/** @type {{ loading: boolean, unreachable: string | null }} */
export const state = { loading: false, unreachable: null };

let pending = 0;
let loadingTimer = null;

function update(patch) {
  const next = { ...state, ...patch };
  if (next.loading === state.loading && next.unreachable === state.unreachable) return;
  Object.assign(state, next);
  changes.dispatchEvent(new Event('change'));
}

/** A request left: "Loading…" appears if it has not answered in a moment. */
export function requestStarted() {
  pending += 1;
  loadingTimer ??= setTimeout(() => {
    loadingTimer = null;
    if (pending > 0) update({ loading: true });
  }, LOADING_DELAY_MS);
}

/**
 * A request ended with this HTTP status (0: no answer, with why).
 * @param {number} status
 * @param {string} [detail]
 */
export function requestEnded(status, detail = '') {
  pending = Math.max(0, pending - 1);
  if (pending === 0) {
    clearTimeout(loadingTimer);
    loadingTimer = null;
  }
  update({ loading: pending > 0 && state.loading, unreachable: status === 0 ? detail || 'no answer' : null });
}

/** Something (the call feed's stream) got no answer. */
export function noAnswer(detail) {
  update({ unreachable: detail || 'no answer' });
}

/**
 * Shows the state in `box`: a polite "Loading…" and an alert while the service is unreachable,
 * with a button to try again. `retry` runs when the person asks or when the service answers again.
 * @param {HTMLElement} box
 * @param {() => void} retry
 */
export function showServiceState(box, retry) {
  const busy = h('p', { id: 'busy', class: 'busy', role: 'status', hidden: true }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Loading…');
  const message = h('span', {});
  const again = h('button', { type: 'button', class: 'small', onclick: retry }, 'Try again');
  const down = h('div', { id: 'unreachable', class: 'banner bad', role: 'alert', hidden: true }, message, ' ', again);
  box.replaceChildren(busy, down);
  let recheck = null;

  async function checkHealth() {
    try {
      await fetch('/healthz', { cache: 'no-store' });
    } catch {
      return; // still down
    }
    update({ unreachable: null });
    retry();
  }

  changes.addEventListener('change', () => {
    busy.hidden = !state.loading;
    document.getElementById('main')?.setAttribute('aria-busy', String(state.loading));
    down.hidden = state.unreachable === null;
    message.textContent =
      state.unreachable === null
        ? ''
        : `Service unreachable: toolport did not answer (${state.unreachable}). Check that it is running and that this machine can reach it; the console tries again every few seconds.`;
    if (state.unreachable !== null && recheck === null) recheck = setInterval(() => void checkHealth(), RECHECK_MS);
    if (state.unreachable === null && recheck !== null) {
      clearInterval(recheck);
      recheck = null;
    }
  });
}
