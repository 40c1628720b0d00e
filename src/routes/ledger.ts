/**
 * The effect ledger's admin routes (docs/ledger.md): look up a record, invalidate one, a tool's, or a
 * scope's. Each route is marked `config.admin`: with API keys configured (docs/operations.md) the auth hook
 * (src/http/auth.ts) refuses them to keys without `admin: true`.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidQuery, NotFound } from '../errors.ts';
import type { EffectLedger } from '../store/ledger.ts';
import { documentOnly, problemResponses } from '../schemas.ts';

const anyJson = { description: 'any JSON value' };

export const toolEffectSchema = {
  type: 'object',
  properties: {
    effect_id: { type: 'string' },
    idempotency_key: { type: 'string' },
    tool_name: { type: 'string' },
    params_hash: { type: 'string', description: 'SHA-256 of the canonical JSON of the arguments' },
    result_message: { type: 'string' },
    result_value: anyJson,
    result_success: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'null: never expires' },
    exclude_value_from_context: { type: 'boolean' },
    tool_hash: { type: 'string', description: 'hash of the definition that produced the result' },
  },
  required: ['effect_id', 'idempotency_key', 'tool_name', 'params_hash', 'result_message', 'result_value', 'result_success', 'created_at', 'expires_at'],
};

const removedSchema = {
  type: 'object',
  properties: { removed: { type: 'integer', description: 'how many live entries were removed' } },
  required: ['removed'],
};

/** `global`, `session:<id>` or `key:<API key id>` (`session:` and `key:` alone: calls without one). */
const SCOPE = /^(global|session:[A-Za-z0-9._:-]{0,128}|key:[^\s{}]{0,256})$/;

/** Every ledger key starts with its scope; anything else cannot name an entry. */
const LEDGER_KEY = /^(global|session|key):/;

/** Marks a route for the admin check of docs/operations.md (src/http/auth.ts). */
const ADMIN = { admin: true };

const keyParam = {
  type: 'object',
  properties: { key: { type: 'string', description: 'the idempotency_key of a result, URL-encoded' } },
  required: ['key'],
};

export async function ledgerRoutes(app: FastifyInstance, { ledger }: { ledger: EffectLedger }): Promise<void> {
  app.get<{ Params: { key: string } }>(
    '/ledger/effects/:key',
    {
      config: ADMIN,
      schema: {
        summary: 'The recorded result (ToolEffect) under an idempotency key',
        operationId: 'getEffect',
        tags: ['ledger'],
        params: keyParam,
        response: { 200: toolEffectSchema, ...problemResponses(404, 503) },
      },
    },
    async (request) => {
      const effect = LEDGER_KEY.test(request.params.key) ? await ledger.lookup(request.params.key) : null;
      if (effect === null) throw new NotFound('no recorded effect under this key (never recorded, expired or invalidated)');
      return effect;
    },
  );

  app.delete<{ Params: { key: string } }>(
    '/ledger/effects/:key',
    {
      config: ADMIN,
      schema: {
        summary: 'Invalidate one entry: the next identical call runs the tool again',
        operationId: 'deleteEffect',
        tags: ['ledger'],
        params: keyParam,
        response: { 200: removedSchema, ...problemResponses(404, 503) },
      },
    },
    async (request) => {
      if (!LEDGER_KEY.test(request.params.key) || !(await ledger.invalidate(request.params.key))) throw new NotFound('no ledger entry under this key');
      return { removed: 1 };
    },
  );

  app.delete<{ Params: { name: string } }>(
    '/ledger/tools/:name',
    {
      config: ADMIN,
      schema: {
        summary: "Invalidate every recorded result of one tool (cost in proportion to that tool's entries)",
        operationId: 'deleteToolEffects',
        tags: ['ledger'],
        params: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z0-9_-]{1,64}$' } }, required: ['name'] },
        response: { 200: removedSchema, ...problemResponses(400, 503) },
      },
    },
    async (request) => ({ removed: await ledger.invalidateTool(request.params.name) }),
  );

  app.delete<{ Querystring: { scope?: string } }>(
    '/ledger',
    {
      config: ADMIN,
      // scope is checked by the handler, with a message that names the accepted forms.
      validatorCompiler: documentOnly,
      schema: {
        summary: 'Invalidate every recorded result of one scope',
        operationId: 'deleteScopeEffects',
        tags: ['ledger'],
        querystring: {
          type: 'object',
          properties: { scope: { type: 'string', pattern: SCOPE.source, description: '`global`, `session:<X-Session-Id>` or `key:<API key id>`' } },
          required: ['scope'],
        },
        response: { 200: removedSchema, ...problemResponses(400, 503) },
      },
    },
    async (request) => {
      const scope = request.query.scope;
      if (scope === undefined || !SCOPE.test(scope)) {
        throw new InvalidQuery('scope is required: global, session:<X-Session-Id> or key:<API key id>');
      }
      return { removed: await ledger.clearScope(scope) };
    },
  );
}
