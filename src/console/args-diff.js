// Arguments side by side: which fields an approver changed, added or removed, field by field
// (a path such as `items[0].quantity`), so a person sees exactly what will run instead of what was asked.
import { h } from './dom.js';

/** Every leaf of a JSON value by its path (objects and arrays opened; empty ones kept as leaves). */
function leaves(value, path = '', into = new Map()) {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, i) => leaves(item, `${path}[${i}]`, into));
  else if (value !== null && typeof value === 'object' && Object.keys(value).length > 0)
    for (const [key, child] of Object.entries(value)) leaves(child, path === '' ? key : `${path}.${key}`, into);
  else into.set(path === '' ? '(all)' : path, JSON.stringify(value));
  return into;
}

/**
 * The fields that differ between `asked` and `edited`.
 * @returns {{ path: string, kind: 'changed' | 'added' | 'removed', asked?: string, edited?: string }[]}
 */
export function argumentChanges(asked, edited) {
  const before = leaves(asked);
  const after = leaves(edited);
  /** @type {{ path: string, kind: 'changed' | 'added' | 'removed', asked?: string, edited?: string }[]} */
  const changes = [];
  for (const [path, value] of before) {
    if (!after.has(path)) changes.push({ path, kind: 'removed', asked: value });
    else if (after.get(path) !== value) changes.push({ path, kind: 'changed', asked: value, edited: after.get(path) });
  }
  for (const [path, value] of after) if (!before.has(path)) changes.push({ path, kind: 'added', edited: value });
  return changes;
}

/** A table of the changes (a sentence when there are none), labelled for screen readers. */
export function argumentDiff(asked, edited, caption = 'Changed arguments: asked, and what will run') {
  const changes = argumentChanges(asked, edited);
  if (changes.length === 0) return h('p', { class: 'muted small diff-none' }, 'The arguments are as asked.');
  return h(
    'table',
    { class: 'diff' },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Field', 'Asked', 'Runs with'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      changes.map((change) =>
        h(
          'tr',
          { class: `diff-${change.kind}`, 'data-path': change.path },
          h('th', { scope: 'row' }, h('code', {}, change.path), h('span', { class: 'visually-hidden' }, ` (${change.kind})`)),
          h('td', {}, change.asked === undefined ? h('span', { class: 'muted' }, '—') : h('del', {}, change.asked)),
          h('td', {}, change.edited === undefined ? h('span', { class: 'muted' }, '—') : h('ins', {}, change.edited)),
        ),
      ),
    ),
  );
}
