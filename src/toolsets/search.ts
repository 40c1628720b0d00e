/**
 * Tool search (docs/toolsets.md): the catalog indexed with MiniSearch (BM25+) over each tool's name,
 * description, parameter names and descriptions, source, and its source's own words for it (an
 * OpenAPI operation's tags and summary), every word stemmed (Porter); a query's verbs also search for
 * the verbs operation names use (publish → create…). The index is built on the
 * first search after the catalog changes; a search filters by what the caller may call.
 */
import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import { isObject } from '../json.ts';
import type { RegisteredTool, ToolRegistry } from '../tools/registry.ts';
import { SEARCH_TOOLS } from './index.ts';

export const MAX_QUERY_CHARS = 500;
export const MAX_LIMIT = 50;

interface IndexedTool {
  id: string;
  name: string;
  words: string;
  description: string;
  parameters: string;
  source: string;
}

export interface SearchHit {
  tool: RegisteredTool;
  score: number;
}

/** Words of identifiers too: `repos_list-for-org` → `repos list for org`, `pullNumber` → `pull Number`. */
function words(text: string): string {
  return text.replace(/([a-z])([A-Z])/g, '$1 $2').replace(/[_\-/.{}]+/g, ' ');
}

function parameterText(tool: RegisteredTool): string {
  const properties = tool.parameters.properties;
  if (!isObject(properties)) return '';
  return Object.entries(properties)
    .map(([name, schema]) => `${words(name)} ${isObject(schema) && typeof schema.description === 'string' ? schema.description.slice(0, 300) : ''}`)
    .join(' ');
}

function documentOf(tool: RegisteredTool): IndexedTool {
  return {
    id: tool.name,
    name: words(tool.name),
    words: tool.hints === null ? '' : tool.hints.words.map(words).join(' '),
    description: tool.description,
    parameters: parameterText(tool),
    // An upstream's name says what its tools are about; `built-in` or a plugin's file name would not.
    source: tool.source.kind === 'openapi' || tool.source.kind === 'mcp' ? tool.source.name : '',
  };
}

const STOP_WORDS = new Set([
  'a',
  'an',
  'the',
  'of',
  'for',
  'to',
  'in',
  'on',
  'and',
  'or',
  'i',
  'me',
  'my',
  'with',
  'by',
  'is',
  'it',
  'do',
  'how',
  'what',
  'all',
  'this',
  'that',
  'from',
  'be',
  'can',
  'want',
  'need',
]);

function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/**
 * The verbs people use for what API operation names call create, update, get, delete and list (and
 * "me" for the authenticated user): a query word also searches for its operation verb.
 */
const SYNONYMS: Readonly<Record<string, readonly string[]>> = {
  publish: ['create'],
  add: ['create'],
  new: ['create'],
  open: ['create'],
  make: ['create'],
  post: ['create'],
  write: ['create'],
  comment: ['create'],
  set: ['update', 'create'],
  change: ['update'],
  edit: ['update'],
  modify: ['update'],
  rename: ['update'],
  show: ['get'],
  fetch: ['get'],
  read: ['get'],
  view: ['get'],
  remove: ['delete'],
  erase: ['delete'],
  find: ['list', 'search'],
  browse: ['list'],
  me: ['authenticated'],
};

/** A query's word, with its operation verb when it has one. */
function processQueryTerm(term: string): string | string[] | null {
  const lower = term.toLowerCase();
  const synonyms = SYNONYMS[lower];
  const own = processTerm(lower);
  if (synonyms === undefined) return own;
  return [...(own === null ? [] : [own]), ...synonyms.map(stemmer)];
}

export class ToolSearch {
  readonly #registry: ToolRegistry;
  #index: MiniSearch<IndexedTool> | null = null;
  #version = -1;

  constructor(registry: ToolRegistry) {
    this.#registry = registry;
  }

  /** The best `limit` tools for the query among those `allows` lets through, best first. */
  search(query: string, limit: number, allows: ((tool: string) => boolean) | undefined): SearchHit[] {
    const index = this.#current();
    const results = index.search(query, {
      filter: (result) => !SEARCH_TOOLS.includes(result.id as string) && (allows === undefined || allows(result.id as string)),
    });
    const hits: SearchHit[] = [];
    for (const result of results) {
      const tool = this.#registry.get(result.id as string);
      if (tool !== undefined) hits.push({ tool, score: Math.round(result.score * 1000) / 1000 });
      if (hits.length === limit) break;
    }
    return hits;
  }

  #current(): MiniSearch<IndexedTool> {
    if (this.#index !== null && this.#version === this.#registry.version) return this.#index;
    const index = new MiniSearch<IndexedTool>({
      fields: ['name', 'words', 'description', 'parameters', 'source'],
      processTerm,
      searchOptions: {
        boost: { name: 3, words: 2, description: 1.5, parameters: 0.5, source: 1 },
        processTerm: processQueryTerm,
        prefix: (term) => term.length > 3,
        // Typos in long words only: fuzzy matching of every word cost a third of a search and found nothing more.
        fuzzy: (term) => (term.length > 7 ? 0.15 : false),
        combineWith: 'OR',
      },
    });
    index.addAll(this.#registry.list().map(documentOf));
    this.#index = index;
    this.#version = this.#registry.version;
    return index;
  }
}
