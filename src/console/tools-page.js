// Tools: the catalog grouped by source or by toolset (a group's links are built when it opens, so
// thousands of tools render at once), a health strip per upstream, a search box — the service's
// ranked search (GET /tools/search) once the catalog is large — and a tool's detail with a form to try it.
import { problemText, request } from './api.js';
import { add, clear, h, notice } from './dom.js';
import { healthChips } from './source-health.js';
import { createCatalog } from './tool-catalog.js';
import { toolDetail } from './tool-detail.js';

/** From this many tools, searching asks the service (ranked, with scores) instead of matching words here. */
export const SERVER_SEARCH_FROM = 60;
/** A person reads the first few; each result carries its whole definition (GitHub: ≈ 25 kB apiece). */
const SEARCH_LIMIT = 25;
const SEARCH_DELAY_MS = 150;
const KIND_TEXT = { builtin: 'Built into toolport', plugin: 'Plugin', http: 'HTTP tools', openapi: 'OpenAPI document', mcp: 'MCP server' };
/** How often the health strip is read again while the page is shown. */
const HEALTH_EVERY_MS = 10_000;

export function createToolsPage(section, context) {
  /** @type {any[]} */
  let tools = [];
  const byName = new Map();
  let current = null;
  /** GET /sources rows; null until read (or when the service has no such route). */
  let sources = null;
  /** GET /toolsets rows. */
  let toolsets = [];
  /** The chosen toolset's listing (GET /tools?toolset=): names, or null for the whole catalog. */
  let toolsetNames = null;
  let searchRun = 0;
  let searchTimer = null;
  let healthTimer = null;

  const search = h('input', { id: 'tool-search', type: 'search', placeholder: 'What should the tool do?', autocomplete: 'off', 'aria-controls': 'tool-list' });
  const groupBy = h('select', { id: 'tool-group-by' }, h('option', { value: 'source' }, 'Source'), h('option', { value: 'toolset' }, 'Toolset'));
  const toolsetPick = h('select', { id: 'tool-toolset' }, h('option', { value: '' }, 'All tools'));
  const count = h('p', { class: 'muted small', role: 'status', id: 'tool-count' });
  const catalog = createCatalog();
  const strip = h('ul', { class: 'health-strip', id: 'health-strip', 'aria-label': 'Upstream health', hidden: true });
  const detail = h('article', { class: 'tool-detail', 'aria-live': 'polite' }, notice('Choose a tool.'));
  add(
    section,
    h('section', { class: 'health', 'aria-label': 'Upstream health' }, strip),
    h(
      'div',
      { class: 'split' },
      h(
        'aside',
        { class: 'catalog', 'aria-label': 'Catalog' },
        h(
          'div',
          { class: 'row catalog-controls' },
          h('div', { class: 'field' }, h('label', { for: 'tool-group-by' }, 'Group by'), groupBy),
          h('div', { class: 'field' }, h('label', { for: 'tool-toolset' }, 'Toolset'), toolsetPick),
        ),
        h('div', { class: 'field' }, h('label', { for: 'tool-search' }, 'Search tools'), search),
        count,
        h('nav', { 'aria-label': 'Tools' }, catalog.element),
      ),
      detail,
    ),
  );

  // main.js reads the catalog once (GET /tools?fields=…): this key's tools, a few fields each.
  const answer = context.tools;
  if (answer.ok) tools = answer.data.tools;
  else detail.replaceChildren(notice(`The catalog could not be read: ${problemText(answer)}`, 'alert'));
  for (const tool of tools) byName.set(tool.name, tool);
  context.tools = tools;
  const ranked = () => tools.length >= SERVER_SEARCH_FROM;

  search.addEventListener('input', () => {
    clearTimeout(searchTimer);
    if (search.value.trim() === '' || !ranked()) return renderList();
    searchTimer = setTimeout(renderList, SEARCH_DELAY_MS);
  });
  // Enter in the search box opens the best match.
  search.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter') return;
    event.preventDefault();
    const first = /** @type {HTMLAnchorElement | null} */ (catalog.element.querySelector('ul.results a'));
    if (first !== null) location.hash = new URL(first.href).hash;
  });
  groupBy.addEventListener('change', () => renderList());
  toolsetPick.addEventListener('change', () => void chooseToolset(toolsetPick.value));

  /** The tools shown: the whole catalog, or the chosen toolset's listing. */
  const visible = () => (toolsetNames === null ? tools : toolsetNames.map((name) => byName.get(name)).filter(Boolean));

  function groups() {
    const shown = visible();
    const names = new Set(shown.map((t) => t.name));
    const rows = groupBy.value === 'toolset' ? toolsetGroups() : sourceGroups();
    const result = [];
    const placed = new Set();
    for (const row of rows) {
      const members = row.tools.filter((name) => names.has(name)).map((name) => byName.get(name));
      for (const tool of members) placed.add(tool.name);
      if (members.length > 0) result.push({ ...row, tools: members });
    }
    const rest = shown.filter((t) => !placed.has(t.name));
    const restTitle = groupBy.value === 'toolset' ? 'In no toolset' : result.length === 0 ? 'All tools' : 'Other tools';
    if (rest.length > 0) result.push({ key: 'other', title: restTitle, tools: rest });
    return result;
  }

  function sourceGroups() {
    return (sources ?? []).map((s) => ({
      key: `source:${s.name}`,
      title: s.name,
      note: KIND_TEXT[s.kind],
      state: s.kind === 'builtin' || s.kind === 'plugin' ? undefined : s.state,
      tools: s.tools,
    }));
  }

  function toolsetGroups() {
    return toolsets.map((t) => ({ key: `toolset:${t.name}`, title: t.name, note: t.description ?? undefined, tools: t.tools }));
  }

  async function renderList() {
    const query = search.value.trim();
    const run = ++searchRun;
    if (query === '') {
      const shown = groups();
      count.textContent = `${visible().length} tools in ${shown.length} groups`;
      catalog.showGroups(shown, current, visible().length < SERVER_SEARCH_FROM);
      return;
    }
    if (!ranked()) {
      const words = query.toLowerCase().split(/\s+/);
      const found = visible().filter((t) => words.every((w) => `${t.name} ${t.description}`.toLowerCase().includes(w)));
      count.textContent = `${found.length} of ${visible().length} tools`;
      catalog.showResults(
        found.map((tool) => ({ tool })),
        current,
      );
      return;
    }
    const scope = toolsetPick.value ? `&toolset=${encodeURIComponent(toolsetPick.value)}` : '';
    const found = await request(`/tools/search?q=${encodeURIComponent(query)}&limit=${SEARCH_LIMIT}${scope}`);
    if (run !== searchRun) return; // a later keystroke has asked again
    if (!found.ok) {
      count.textContent = `The search failed: ${problemText(found)}`;
      catalog.showResults([], current);
      return;
    }
    const results = found.data.tools.map((tool) => ({ tool: byName.get(tool.name) ?? tool, score: tool.score }));
    count.textContent = `${results.length} best matches of ${visible().length} tools, ranked by the service`;
    catalog.showResults(results, current);
  }

  async function chooseToolset(name) {
    if (name === '') toolsetNames = null;
    else {
      const listing = await request(`/tools?toolset=${encodeURIComponent(name)}`);
      if (!listing.ok) {
        count.textContent = `The toolset could not be read: ${problemText(listing)}`;
        return;
      }
      toolsetNames = listing.data.tools.map((t) => t.name);
    }
    await renderList();
  }

  async function readSources() {
    const answer = await request('/sources');
    if (!answer.ok) return;
    sources = answer.data.sources;
    const chips = healthChips(sources, (row) => {
      groupBy.value = 'source';
      search.value = '';
      void renderList().then(() => catalog.open(`source:${row.name}`));
    });
    strip.replaceChildren(...chips);
    strip.hidden = chips.length === 0;
    for (const row of sources) catalog.setState(`source:${row.name}`, row.state);
  }

  async function readToolsets() {
    const answer = await request('/toolsets');
    toolsets = answer.ok ? answer.data.toolsets : [];
    toolsetPick.replaceChildren(
      h('option', { value: '' }, 'All tools'),
      ...toolsets.map((t) => h('option', { value: t.name }, `${t.name} (${t.tools.length})`)),
    );
    toolsetPick.disabled = toolsets.length === 0;
    /** @type {HTMLOptionElement} */ (groupBy.options[1]).disabled = toolsets.length === 0;
  }

  // Sources and toolsets are read once the page is first shown; until then the catalog is one group.
  const ready = answer.ok ? Promise.all([readSources(), readToolsets()]).then(() => renderList()) : Promise.resolve();

  async function show(name) {
    current = name ?? null;
    catalog.select(current);
    const listed = byName.get(current);
    if (listed === undefined) {
      detail.replaceChildren(notice(current ? `No tool named "${current}" for this key.` : 'Choose a tool from the catalog.'));
      return;
    }
    const tool = await definitionOf(listed);
    if (current !== listed.name) return; // another tool was chosen meanwhile
    if (tool === null) {
      detail.replaceChildren(notice(`The definition of ${listed.name} could not be read.`, 'alert'));
      return;
    }
    add(clear(detail), toolDetail(tool, context, sources?.find((s) => s.tools.includes(tool.name)) ?? null));
  }

  /** The whole definition (GET /tools/{name}): the catalog is read with a few fields only, so its first page is quick. */
  async function definitionOf(listed) {
    if (listed.parameters !== undefined) return listed;
    const answer = await request(`/tools/${encodeURIComponent(listed.name)}`);
    if (!answer.ok) return null;
    const tool = { ...answer.data, source: listed.source };
    byName.set(tool.name, tool);
    return tool;
  }

  return {
    async enter(param) {
      if (!answer.ok) return;
      await ready;
      await show(param ? decodeURIComponent(param) : tools[0]?.name);
      healthTimer ??= setInterval(() => void readSources(), HEALTH_EVERY_MS);
    },
    leave() {
      clearInterval(healthTimer);
      healthTimer = null;
    },
  };
}
