// Small DOM helpers shared by the pages: element building, JSON blocks, times.

/**
 * h('button', {class: 'x', onclick: fn, disabled: true}, 'text', child…): an element.
 * Attributes: `class`, `text`, `on<event>` handlers, booleans (set when true), everything else as is.
 */
export function h(tag, attrs = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.className = value;
    else if (name === 'text') element.textContent = value;
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

/** Appends children to an element, skipping null, undefined and false (and flattening arrays). */
export function add(element, ...children) {
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(element, child);
    else element.append(child instanceof Node ? child : String(child));
  }
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

let lastId = 0;
/** A fresh element id, for label/for and aria-describedby pairs. */
export function uid(prefix = 'c') {
  lastId += 1;
  return `${prefix}-${lastId}`;
}

export function jsonText(value) {
  return value === undefined ? '' : JSON.stringify(value, null, 2);
}

/** A focusable, labelled block of JSON (scrollable with the keyboard). */
export function jsonBlock(value, label) {
  return h('pre', { class: 'code', tabindex: 0, 'aria-label': label }, jsonText(value));
}

/** A focusable, labelled block of text. */
export function textBlock(text, label) {
  return h('pre', { class: 'code', tabindex: 0, 'aria-label': label }, text);
}

/** 14:03:07.123 in local time. */
export function clockTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return String(iso ?? '');
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

export function duration(ms) {
  if (typeof ms !== 'number') return '';
  return ms < 10 ? `${ms.toFixed(2)} ms` : ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** A badge for an outcome: `success` or an error code. */
export function outcomeBadge(outcome) {
  const kind = outcome === 'success' ? 'ok' : outcome === 'in_progress' ? 'warn' : 'bad';
  return h('span', { class: `badge ${kind}` }, outcome);
}

/** A short message in a live region: `role=status` (polite) or `alert`. */
export function notice(text, kind = 'status') {
  return h('p', { class: kind === 'alert' ? 'error' : 'muted', role: kind }, text);
}
