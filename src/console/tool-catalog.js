// The catalog's list: tools in collapsible groups (a source or a toolset) whose links are built only
// when the group is opened, a hundred at a time, so a catalog of thousands of tools renders at once;
// or a flat list of search results, best first, with their scores.
import { h } from './dom.js';
import { stateBadge } from './source-health.js';

/** Links built per step when a group opens (and per "Show more"). */
const STEP = 100;

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

export function createCatalog() {
  const element = h('div', { id: 'tool-list', class: 'tool-groups' });
  /** Groups the person opened (or that held the current tool): kept open across re-renders. */
  const opened = new Set();
  /** key → reveal(name): shows the group's links up to that tool. */
  let revealers = new Map();

  /** @param {Group} group @param {string | null} current @param {boolean} openAll */
  function groupElement(group, current, openAll) {
    const list = h('ul', { class: 'tool-list' });
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
      list,
      more,
    );
    let shown = 0;
    const showUpTo = (count) => {
      const next = group.tools.slice(shown, Math.max(count, shown + STEP));
      list.append(...next.map((tool) => toolLink(tool, current, undefined)));
      shown += next.length;
      const left = group.tools.length - shown;
      more.hidden = left <= 0;
      more.textContent = `Show ${Math.min(STEP, left)} more (${left} not shown)`;
    };
    more.addEventListener('click', () => showUpTo(shown + STEP));
    details.addEventListener('toggle', () => {
      if (details.open) {
        opened.add(group.key);
        if (shown === 0) showUpTo(STEP);
      } else opened.delete(group.key);
    });
    const holdsCurrent = current !== null && group.tools.some((t) => t.name === current);
    if (openAll || opened.has(group.key) || holdsCurrent) {
      details.open = true;
      const at = holdsCurrent ? group.tools.findIndex((t) => t.name === current) : 0;
      showUpTo(at + 1);
    }
    revealers.set(group.key, (name) => {
      const at = group.tools.findIndex((t) => t.name === name);
      if (at === -1) return false;
      details.open = true;
      if (at >= shown) showUpTo(at + 1);
      return true;
    });
    return details;
  }

  return {
    element,
    /** Shows the groups; with openAll (a small catalog) every group is open. */
    showGroups(groups, current, openAll) {
      revealers = new Map();
      element.replaceChildren(...groups.map((group) => groupElement(group, current, openAll)));
    },
    /** Shows search results, best first, with their scores when the service ranked them. */
    showResults(results, current) {
      revealers = new Map();
      element.replaceChildren(
        h(
          'ul',
          { class: 'tool-list results' },
          results.map((r) => toolLink(r.tool, current, r.score)),
        ),
      );
    },
    /** Marks `name` as the current tool, opening its group (the first that holds it) and scrolling to it. */
    select(name) {
      for (const link of element.querySelectorAll('a[aria-current]')) link.removeAttribute('aria-current');
      if (name === null) return;
      let link = element.querySelector(`a[data-tool="${CSS.escape(name)}"]`);
      if (link === null) {
        for (const reveal of revealers.values()) if (reveal(name)) break;
        link = element.querySelector(`a[data-tool="${CSS.escape(name)}"]`);
      }
      link?.setAttribute('aria-current', 'true');
    },
    /** Opens the group `key` and brings it into view. */
    open(key) {
      const details = /** @type {HTMLDetailsElement | null} */ (element.querySelector(`details[data-group="${CSS.escape(key)}"]`));
      if (details === null) return;
      details.open = true;
      details.scrollIntoView({ block: 'nearest' });
      details.querySelector('summary')?.focus();
    },
  };
}
