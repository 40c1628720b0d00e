// The catalog's list: tools in collapsible groups (a source or a toolset) whose links are built only
// when the group is opened, a hundred at a time, so a catalog of thousands of tools renders at once;
// or a flat list of search results, best first, with their scores.
import { h } from './dom.js';
import { stateBadge } from './source-health.js';

/** Links built per step when a group opens (and per "Show more"). */
const STEP = 100;
/** A group of more tools than this holds sub-groups by the names' first two words (github_issues, github_repos…). */
const SPLIT_FROM = 150;

/**
 * @typedef {{ name: string, description: string }} ToolRow
 * @typedef {{ key: string, title: string, note?: string, state?: string, tools: ToolRow[] }} Group
 */

/** @param {ToolRow} tool @param {string | null} current @param {number} [score] */
function toolLink(tool, current, score) {
  return h(
    'li',
    {},
    h(
      'a',
      { href: `#tools/${encodeURIComponent(tool.name)}`, 'data-tool': tool.name, 'aria-current': current === tool.name ? 'true' : null },
      h('span', { class: 'tool-name' }, tool.name, score === undefined ? null : h('span', { class: 'score' }, score.toFixed(2))),
      h('span', { class: 'tool-desc' }, tool.description),
    ),
  );
}

/** @param {Group} group @returns {Group[] | null} */
function subGroups(group) {
  if (group.tools.length <= SPLIT_FROM) return null;
  const byPrefix = new Map();
  for (const tool of group.tools) {
    const prefix = tool.name.split('_').slice(0, 2).join('_');
    if (!byPrefix.has(prefix)) byPrefix.set(prefix, []);
    byPrefix.get(prefix).push(tool);
  }
  // Worth it only when the words gather tools: not one sub-group, not one per tool.
  if (byPrefix.size < 2 || byPrefix.size > group.tools.length / 3) return null;
  return [...byPrefix.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([prefix, tools]) => ({ key: `${group.key}/${prefix}`, title: prefix, tools }));
}

export function createCatalog() {
  const element = h('div', { id: 'tool-list', class: 'tool-groups' });
  /** Groups the person opened (or that held the current tool): kept open across re-renders. */
  const opened = new Set();
  /** The shown groups' reveal(name): opens the group holding that tool and builds its link. */
  let revealers = [];

  /** @param {Group} group @param {string | null} current @param {boolean} openAll */
  function groupElement(group, current, openAll) {
    const names = new Set(group.tools.map((t) => t.name));
    const children = subGroups(group);
    const body = h(children ? 'div' : 'ul', { class: children ? 'sub-groups' : 'tool-list' });
    const more = h('button', { type: 'button', class: 'small more', hidden: true });
    const details = h(
      'details',
      { class: 'tool-group', 'data-group': group.key },
      h(
        'summary',
        {},
        h('span', { class: 'group-title' }, group.title),
        ' ',
        h('span', { class: 'muted small group-count' }, `${group.tools.length}`),
        group.state ? [' ', stateBadge(group.state)] : null,
      ),
      group.note ? h('p', { class: 'muted small group-note' }, group.note) : null,
      body,
      children ? null : more,
    );
    let shown = 0;
    /** @type {{ details: HTMLElement, reveal: (name: string) => boolean }[] | null} */
    let built = null;
    const showUpTo = (count) => {
      const next = group.tools.slice(shown, Math.max(count, shown + STEP));
      body.append(...next.map((tool) => toolLink(tool, current, undefined)));
      shown += next.length;
      const left = group.tools.length - shown;
      more.hidden = left <= 0;
      more.textContent = `Show ${Math.min(STEP, left)} more (${left} not shown)`;
    };
    /** Builds what an open group shows: its sub-groups, or its links up to `name` (at least a step). */
    const fill = (name) => {
      if (children) {
        if (built === null) {
          built = children.map((child) => groupElement(child, current, false));
          body.append(...built.map((b) => b.details));
        }
        if (name !== null) built.some((b) => b.reveal(name));
      } else {
        const at = name === null ? -1 : group.tools.findIndex((t) => t.name === name);
        if (shown === 0 || at >= shown) showUpTo(at + 1);
      }
    };
    more.addEventListener('click', () => showUpTo(shown + STEP));
    details.addEventListener('toggle', () => {
      if (details.open) {
        opened.add(group.key);
        fill(null);
      } else opened.delete(group.key);
    });
    const reveal = (name) => {
      if (!names.has(name)) return false;
      details.open = true;
      fill(name);
      return true;
    };
    if (current !== null && names.has(current)) reveal(current);
    else if (openAll || opened.has(group.key)) {
      details.open = true;
      fill(null);
    }
    return { details, reveal };
  }

  const linkOf = (name) => element.querySelector(`a[data-tool="${CSS.escape(name)}"]`);

  /** Scrolls the list (not the page) so the tool's link is in view. */
  function scrollToLink(name) {
    const link = linkOf(name);
    const list = element.parentElement;
    if (link === null || list === null) return;
    const offset = link.getBoundingClientRect().top - list.getBoundingClientRect().top;
    if (offset < 0 || offset > list.clientHeight - link.clientHeight) list.scrollTop += offset - list.clientHeight / 3;
  }

  return {
    element,
    /** Shows the groups; with openAll (a small catalog) every group is open. */
    showGroups(groups, current, openAll) {
      const shown = groups.map((group) => groupElement(group, current, openAll));
      revealers = shown.map((g) => g.reveal);
      element.replaceChildren(...shown.map((g) => g.details));
      if (current !== null) scrollToLink(current);
    },
    /** Shows search results, best first, with their scores when the service ranked them. */
    showResults(results, current) {
      revealers = [];
      element.replaceChildren(
        h(
          'ul',
          { class: 'tool-list results' },
          results.map((r) => toolLink(r.tool, current, r.score)),
        ),
      );
      if (element.parentElement !== null) element.parentElement.scrollTop = 0; // the best match first, not where the last list was scrolled
    },
    /** Marks `name` as the current tool, opening its group (the first that holds it) and scrolling to it. */
    select(name) {
      for (const link of element.querySelectorAll('a[aria-current]')) link.removeAttribute('aria-current');
      if (name === null) return;
      if (linkOf(name) === null) revealers.some((reveal) => reveal(name));
      linkOf(name)?.setAttribute('aria-current', 'true');
      scrollToLink(name);
    },
    /** Shows a group's new state (a source read again) on its heading. */
    setState(key, state) {
      const badge = element.querySelector(`details[data-group="${CSS.escape(key)}"] > summary .badge.state`);
      if (badge !== null && badge.getAttribute('data-state') !== state) badge.replaceWith(stateBadge(state));
    },
    /** Opens the group `key` (a source's or a toolset's) and brings it into view. */
    open(key) {
      const details = /** @type {HTMLDetailsElement | null} */ (element.querySelector(`details[data-group="${CSS.escape(key)}"]`));
      if (details === null) return;
      details.open = true;
      details.scrollIntoView({ block: 'nearest' });
      details.querySelector('summary')?.focus();
    },
  };
}
