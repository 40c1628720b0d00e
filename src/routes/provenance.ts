/** GET /tools/hashes/{hash} and GET /tools/{name}/versions: the definitions ever served, by hash (docs/formats.md). */
import type { FastifyInstance } from 'fastify';
import { NotFound } from '../errors.ts';
import { problemResponses } from '../schemas.ts';
import { allowsOf } from '../http/scope.ts';
import type { Provenance } from '../tools/provenance.ts';
import { TOOL_NAME } from '../tools/registry.ts';

const TOOL_HASH = /^[0-9a-f]{64}$/;

const keptDefinitionSchema = {
  type: 'object',
  properties: {
    hash: { type: 'string' },
    first_served_at: { type: 'string', format: 'date-time' },
    definition: {
      type: 'object',
      description: 'exactly what the hash covers: name, description, parameters, result',
      additionalProperties: true,
    },
  },
  required: ['hash', 'first_served_at', 'definition'],
};

const versionsSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    versions: {
      type: 'array',
      description: 'oldest first',
      items: {
        type: 'object',
        properties: {
          hash: { type: 'string' },
          first_served_at: { type: 'string', format: 'date-time' },
          pending: { type: 'boolean', enum: [true], description: "a pinned tool's changed upstream definition, not served until an admin accepts it" },
        },
        required: ['hash', 'first_served_at'],
      },
    },
  },
  required: ['name', 'versions'],
};

export async function provenanceRoutes(app: FastifyInstance, { provenance }: { provenance: Provenance }): Promise<void> {
  async function versionsOf(name: string, allows: ((tool: string) => boolean) | undefined) {
    await provenance.recorded();
    // A name no tool can have is never looked up (it would only name a key that cannot exist);
    // a tool outside the caller's allowlist (or the request's toolset) does not exist for it.
    const visible = TOOL_NAME.test(name) && (allows === undefined || allows(name));
    const versions = visible ? await provenance.versions(name) : [];
    if (versions.length === 0) throw new NotFound(`no tool named "${name.slice(0, 64)}" has been served`);
    return { name, versions };
  }

  app.get<{ Params: { hash: string } }>(
    '/tools/hashes/:hash',
    {
      schema: {
        summary: 'A tool definition that was served, by its hash',
        operationId: 'getToolByHash',
        tags: ['discovery'],
        params: { type: 'object', properties: { hash: { type: 'string' } }, required: ['hash'] },
        response: {
          200: { description: 'the definition and when it was first served', anyOf: [keptDefinitionSchema, versionsSchema] },
          ...problemResponses(404, 503),
        },
      },
    },
    async (request) => {
      const { hash } = request.params;
      // The static "hashes" segment shadows GET /tools/{name}/versions for a tool named "hashes".
      if (hash === 'versions') return versionsOf('hashes', allowsOf(request));
      await provenance.recorded();
      const found = TOOL_HASH.test(hash) ? await provenance.definition(hash) : null;
      const allows = allowsOf(request);
      const kept = found !== null && (allows === undefined || allows(String(found.definition.name))) ? found : null;
      if (kept === null) throw new NotFound(`no tool definition with hash "${hash.slice(0, 64)}" has been served`);
      return kept;
    },
  );

  app.get<{ Params: { name: string } }>(
    '/tools/:name/versions',
    {
      schema: {
        summary: 'The hashes a tool name has had, oldest first, with when each was first served',
        operationId: 'listToolVersions',
        tags: ['discovery'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        response: { 200: versionsSchema, ...problemResponses(404, 503) },
      },
    },
    async (request) => versionsOf(request.params.name, allowsOf(request)),
  );

  app.post<{ Params: { name: string }; Body: { hash: string } }>(
    '/tools/:name/accept',
    {
      config: { admin: true },
      schema: {
        summary: "Accept a pinned tool's changed definition: it becomes the one served, on every replica",
        operationId: 'acceptToolVersion',
        tags: ['discovery'],
        params: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { hash: { type: 'string', pattern: '^[0-9a-f]{64}$', description: 'a hash listed by GET /tools/{name}/versions' } },
          required: ['hash'],
        },
        response: {
          200: {
            type: 'object',
            properties: { name: { type: 'string' }, current: { type: 'string' }, pending: { type: 'null' } },
            required: ['name', 'current', 'pending'],
          },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      const pin = TOOL_NAME.test(name) ? await provenance.accept(name, request.body.hash) : null;
      if (pin === null) throw new NotFound(`no pinned tool "${name.slice(0, 64)}" has had the definition ${request.body.hash}`);
      return { name, current: pin.current, pending: null };
    },
  );
}
