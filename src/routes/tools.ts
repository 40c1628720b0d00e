/** GET /tools and GET /tools/{name}: definitions in a provider's shape, with the catalog hash as ETag. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { InvalidQuery, NotFound } from '../errors.ts';
import { allowsOf } from '../http/scope.ts';
import { FORMAT_NAMES, formatByName, parseToolChoice, type Format } from '../formats/index.ts';
import { documentOnly, ifNoneMatchHeaders, notModifiedResponse, problemResponses, toolListSchema } from '../schemas.ts';
import type { Provenance } from '../tools/provenance.ts';
import { catalogHash, type RegisteredTool, type ToolRegistry } from '../tools/registry.ts';
import type { ToolsetDefinition, Toolsets } from '../toolsets/index.ts';
import { compressLargeAnswers } from '../http/compress.ts';

interface ToolsQuery {
  format?: string;
  tool_choice?: string;
  toolset?: string;
  fields?: string;
}

/** What `fields` may pick: the native definition's members, and where the tool comes from. */
const FIELDS: Record<string, (tool: RegisteredTool) => unknown> = {
  name: (t) => t.name,
  description: (t) => t.description,
  source: (t) => t.source.label,
  parameters: (t) => t.parameters,
  result: (t) => t.result ?? undefined,
  examples: (t) => t.examples,
  idempotency: (t) => t.idempotency,
  annotations: (t) => t.annotations,
  timeout_ms: (t) => t.timeoutMs,
  hash: (t) => t.hash,
};

const FIELD_NAMES = Object.keys(FIELDS).join('|');

/** `fields=name,description`: the pickers, in the order given; only with the native format. */
function fieldsOf(raw: string | undefined, format: Format): Fields | null {
  if (raw === undefined) return null;
  if (format.name !== 'native') throw new InvalidQuery(`fields needs format native, not ${format.name}`);
  const names = [...new Set(raw.split(',').map((name) => name.trim()))];
  return names.map((name) => {
    const pick = FIELDS[name];
    if (pick === undefined) throw new InvalidQuery(`fields: no field "${name.slice(0, 64)}"; use ${Object.keys(FIELDS).join(', ')}`);
    return [name, pick];
  });
}

type Fields = [string, (tool: RegisteredTool) => unknown][];

const shapeOf = (fields: Fields | null) => (fields === null ? '' : fields.map(([name]) => name).join(','));

/** One listing's body and entity tag: whole definitions in the format's shape, or the fields asked for. */
function renderListing(tools: RegisteredTool[], format: Format, choice: string | undefined, fields: Fields | null): { tag: string; body: string } {
  const hash = catalogHash(tools);
  const toolChoice = toolChoiceOf(
    format,
    choice,
    tools.map((t) => t.name),
  );
  const definitions = fields === null ? tools.map((t) => format.renderTool(t)) : tools.map((t) => pickFields(t, fields));
  const rendered = format.renderToolList ? format.renderToolList(definitions) : definitions;
  const tag = entityTag(hash, format, choice);
  return {
    tag: fields === null ? tag : `${tag}.fields.${shapeOf(fields).replaceAll(',', '+')}`,
    body: JSON.stringify({ tools: rendered, hash, ...toolChoice }),
  };
}

function pickFields(tool: RegisteredTool, fields: Fields): Record<string, unknown> {
  const picked: Record<string, unknown> = {};
  for (const [name, pick] of fields) picked[name] = pick(tool);
  return picked;
}

/** The entity tag of an answer: the hash alone for native (docs/formats.md), else tagged with what shapes the body. */
function entityTag(hash: string, format: Format, toolChoice: string | undefined): string {
  const parts = [hash];
  if (format.name !== 'native' || toolChoice !== undefined) parts.push(format.name);
  if (toolChoice !== undefined) parts.push(toolChoice);
  return parts.join('.');
}

/** `tool_choice` in the format's own terms; a format without one (mcp) cannot honour it. */
function toolChoiceOf(format: Format, raw: string | undefined, toolNames: readonly string[]): Record<string, unknown> {
  if (raw === undefined) return {};
  if (format.renderToolChoice === undefined) throw new InvalidQuery(`format ${format.name} has no tool_choice`);
  return { tool_choice: format.renderToolChoice(parseToolChoice(raw, toolNames)) };
}

/** Whether If-None-Match names this entity tag (weak or strong, in a list, or `*`). */
function matches(request: FastifyRequest, tag: string): boolean {
  const header = request.headers['if-none-match'];
  if (typeof header !== 'string') return false;
  return header.split(',').some((candidate) => {
    const value = candidate.trim().replace(/^W\//, '');
    return value === '*' || value === `"${tag}"` || value === tag;
  });
}

function sendCached(request: FastifyRequest, reply: FastifyReply, tag: string, body: string): FastifyReply {
  reply.header('etag', `"${tag}"`).header('cache-control', 'no-cache');
  if (matches(request, tag)) return reply.code(304).send();
  return reply.type('application/json').send(body);
}

const toolsetListSchema = {
  type: 'object',
  required: ['toolsets'],
  properties: {
    toolsets: {
      type: 'array',
      items: {
        type: 'object',
        required: ['name', 'description', 'discovery', 'tools', 'hash'],
        properties: {
          name: { type: 'string' },
          description: { type: ['string', 'null'] },
          discovery: { type: 'string', enum: ['list', 'search'], description: 'search: its listing is tool_search, tool_invoke and its always tools' },
          code_mode: { type: 'boolean', description: 'its listing is code_api, code_run and its always tools: its members are called from programs' },
          tools: { type: 'array', items: { type: 'string' }, description: 'its members this caller may call' },
          hash: { type: 'string', description: "SHA-256 over its tools' hashes: changes when a member's definition changes, the same on every replica" },
        },
      },
    },
  },
};

const formatQuery = {
  type: 'object',
  properties: { format: { type: 'string', enum: [...FORMAT_NAMES], description: 'the provider whose shape the definitions take (default native)' } },
};

const oneQuery = {
  type: 'object',
  properties: {
    ...formatQuery.properties,
    toolset: { type: 'string', description: 'only a tool of this toolset (as X-Toolset); outside it, 404 as for an unknown tool' },
  },
};

const listQuery = {
  type: 'object',
  properties: {
    ...formatQuery.properties,
    // The tool names join the enum when the document is generated (src/http/openapi-tools.ts).
    tool_choice: {
      type: 'string',
      enum: ['auto', 'none', 'required'],
      description: "auto, none, required or the name of a listed tool: adds the provider's own tool_choice value (not with format mcp, which has none)",
    },
    toolset: { type: 'string', description: 'list only this toolset (GET /toolsets); a toolset that does not exist answers 404' },
    fields: {
      type: 'string',
      pattern: `^(${FIELD_NAMES})(,(${FIELD_NAMES}))*$`,
      description: `only these members of each definition, comma-separated (format native): ${Object.keys(FIELDS).join(', ')}. A first page of a large catalog: name,description,source`,
    },
  },
};

export async function toolRoutes(
  app: FastifyInstance,
  { registry, provenance, toolsets }: { registry: ToolRegistry; provenance: Provenance; toolsets: Toolsets },
): Promise<void> {
  await compressLargeAnswers(app);
  /** Each answer is built once per format and tool_choice, until the catalog changes (an MCP source's list). */
  const cache = new Map<string, { tag: string; body: string }>();
  let cachedVersion = registry.version;

  app.get<{ Querystring: ToolsQuery }>(
    '/tools',
    {
      // format and tool_choice are checked by the handler, with messages that name what is accepted.
      validatorCompiler: documentOnly,
      schema: {
        summary: 'The tools this caller may call, ready to pass to a provider API',
        operationId: 'listTools',
        tags: ['discovery'],
        querystring: listQuery,
        headers: ifNoneMatchHeaders,
        response: { 200: toolListSchema, ...notModifiedResponse, ...problemResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const format = formatByName(request.query.format ?? 'native');
      const choice = request.query.tool_choice;
      const fields = fieldsOf(request.query.fields, format);
      // Each API key sees only its tools, and the catalog hash of those (docs/operations.md).
      const caller = request.caller;
      const toolset = request.toolset;
      const key = `${caller?.id ?? ''}\n${format.name}\n${choice ?? ''}\n${toolset === null ? '' : `${toolset.definition.name}${toolset.search ? '?search' : ''}`}\n${shapeOf(fields)}`;
      if (cachedVersion !== registry.version) {
        cache.clear();
        cachedVersion = registry.version;
      }
      let entry = cache.get(key);
      if (entry === undefined) {
        const tools = registry.list().filter((t) => (caller === null || caller.allows(t.name)) && (toolset === null || toolset.listed(t.name)));
        entry = renderListing(tools, format, choice, fields);
        cache.set(key, entry);
      }
      // Every definition served is kept by its hash first (docs/formats.md: provenance).
      await provenance.recorded();
      return sendCached(request, reply, entry.tag, entry.body);
    },
  );

  app.get<{ Params: { name: string }; Querystring: ToolsQuery }>(
    '/tools/:name',
    {
      validatorCompiler: documentOnly,
      schema: {
        summary: "One tool's definition; its ETag is the tool's hash",
        operationId: 'getTool',
        tags: ['discovery'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        querystring: oneQuery,
        headers: ifNoneMatchHeaders,
        response: { 200: { type: 'object', additionalProperties: true }, ...notModifiedResponse, ...problemResponses(400, 404, 503) },
      },
    },
    async (request, reply) => {
      const format = formatByName(request.query.format ?? 'native');
      const allows = allowsOf(request);
      const tool = allows === undefined || allows(request.params.name) ? registry.get(request.params.name) : undefined;
      if (tool === undefined) throw new NotFound(`no tool named "${request.params.name.slice(0, 64)}"`);
      await provenance.recorded();
      return sendCached(request, reply, entityTag(tool.hash, format, undefined), JSON.stringify(format.renderTool(tool)));
    },
  );

  app.get(
    '/toolsets',
    {
      schema: {
        summary: 'The toolsets this caller may use, each with its tools and content hash',
        operationId: 'listToolsets',
        tags: ['discovery'],
        response: { 200: toolsetListSchema, ...problemResponses(503) },
      },
    },
    async (request) => {
      const caller = request.caller;
      const allows = caller?.allows;
      const listed = toolsets.definitions().filter((d) => caller?.toolsets == null || caller.toolsets.includes(d.name));
      return { toolsets: listed.map((d) => toolsetEntry(d, toolsets.members(d.name, allows))) };
    },
  );
}

/** One toolset as GET /toolsets answers it: its members this caller may call. */
function toolsetEntry(d: ToolsetDefinition, members: RegisteredTool[]) {
  return {
    name: d.name,
    description: d.description,
    discovery: d.discovery ?? 'list',
    code_mode: d.codeMode,
    tools: members.map((t) => t.name),
    hash: catalogHash(members),
  };
}
