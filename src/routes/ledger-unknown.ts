/**
 * Unknown outcomes (docs/ledger.md): runs lost after they started, which may or may not have had
 * their effect. An admin lists them and says, for each, whether it ran (with what it answered: the
 * next identical call replays it) or not (the next one runs). Admin routes, as the other ledger routes.
 */
import type { FastifyInstance } from 'fastify';
import { InvalidBody, NotFound } from '../errors.ts';
import type { EffectLedger, Resolution } from '../store/ledger.ts';
import type { RegisteredTool } from '../tools/registry.ts';
import { problemResponses } from '../schemas.ts';

const ADMIN = { admin: true };
const DEFAULT_TTL_S = 86_400;

const unknownSchema = {
  type: 'object',
  properties: {
    idempotency_key: { type: 'string' },
    tool_name: { type: 'string' },
    scope: { type: 'string' },
    effect_id: { type: 'string', description: 'the id the lost run would have recorded (a replay after "ran" carries it)' },
    lost_at: { type: 'string', format: 'date-time', description: 'when the lost run started' },
  },
  required: ['idempotency_key', 'tool_name', 'scope', 'effect_id', 'lost_at'],
};

// One object, not oneOf: the body validator drops unknown properties per branch, which would strip `result`.
const resolveBody = {
  type: 'object',
  properties: {
    outcome: { type: 'string', enum: ['ran', 'not_ran'] },
    result: {
      type: 'object',
      description: 'with "ran" (required then): what the lost run answered, a ToolResult; the next identical call replays it',
      properties: { message: { type: 'string', minLength: 1 }, value: { description: 'any JSON value' }, exclude_value_from_context: { type: 'boolean' } },
      required: ['message'],
      additionalProperties: false,
    },
  },
  required: ['outcome'],
  additionalProperties: false,
};

interface ResolveBody {
  outcome: 'ran' | 'not_ran';
  result?: { message: string; value?: unknown; exclude_value_from_context?: boolean };
}

export async function ledgerUnknownRoutes(
  app: FastifyInstance,
  { ledger, toolOf }: { ledger: EffectLedger; toolOf: (name: string) => RegisteredTool | undefined },
): Promise<void> {
  app.get<{ Querystring: { limit?: number } }>(
    '/ledger/unknown',
    {
      config: ADMIN,
      schema: {
        summary: 'Unknown outcomes: runs lost after they started, oldest first, awaiting an admin',
        operationId: 'listUnknownEffects',
        tags: ['ledger'],
        querystring: { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } } },
        response: {
          200: { type: 'object', properties: { unknown: { type: 'array', items: unknownSchema } }, required: ['unknown'] },
          ...problemResponses(400, 503),
        },
      },
    },
    async (request) => ({ unknown: await ledger.unknown(request.query.limit ?? 100) }),
  );

  app.post<{ Params: { key: string }; Body: ResolveBody }>(
    '/ledger/effects/:key/resolve',
    {
      config: ADMIN,
      schema: {
        summary: 'Settle an unknown outcome: it ran (the next identical call replays the result given) or it did not (the next one runs)',
        operationId: 'resolveEffect',
        tags: ['ledger'],
        params: { type: 'object', properties: { key: { type: 'string', description: 'the idempotency_key, URL-encoded' } }, required: ['key'] },
        body: resolveBody,
        response: {
          200: { type: 'object', properties: { resolved: { type: 'string', enum: ['ran', 'not_ran'] } }, required: ['resolved'] },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request) => {
      const { key } = request.params;
      const { outcome, result } = request.body;
      if (outcome === 'ran' && result === undefined) throw new InvalidBody('outcome "ran" needs the result the run answered: {"message": …, "value": …}');
      const resolution: Resolution =
        outcome === 'not_ran' || result === undefined
          ? { outcome: 'not_ran' }
          : {
              outcome: 'ran',
              result: { message: result.message, value: result.value ?? null, exclude_value_from_context: result.exclude_value_from_context ?? false },
              toolInfo: (name) => {
                const tool = toolOf(name);
                return { hash: tool?.hash ?? '', ttlS: tool?.idempotency ? tool.idempotency.ttl_s : DEFAULT_TTL_S };
              },
            };
      if (!(await ledger.resolve(key, resolution))) throw new NotFound('no unknown outcome under this key (never lost, already resolved, or still running)');
      return { resolved: outcome };
    },
  );
}
