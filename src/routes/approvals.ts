/**
 * Approvals over HTTP (docs/approvals.md): GET /approvals (what this key may decide, and its own requests),
 * GET /approvals/{id}, POST /approvals/{id}/decision. Who decides is the rule's `approvers` (admin
 * keys always); the caller that asked may read its approval but not decide it (403); anyone else
 * learns nothing of it (404).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AlreadyDecided, Forbidden, InvalidArguments, InvalidBody, InvalidQuery, NotFound } from '../errors.ts';
import { isObject } from '../json.ts';
import type { Approvals } from '../policy/approvals.ts';
import { mayDecide, type Principal } from '../callers/principal.ts';
import { effectiveStatus, type ApprovalRecord } from '../policy/record.ts';
import { documentOnly, problemResponses } from '../schemas.ts';
import type { ApprovalStatus } from '../store/approvals.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { violations } from '../tools/schema.ts';

const STATUSES: readonly ApprovalStatus[] = ['pending', 'approved', 'denied', 'expired', 'executed'];
const MAX_LISTED = 200;
const MAX_NOTE_CHARS = 2000;

const anyJson = { description: 'any JSON value' };
export const approvalSchema = {
  $id: 'Approval',
  type: 'object',
  properties: {
    approval_id: { type: 'string' },
    status: { type: 'string', enum: STATUSES },
    tool: { type: 'string' },
    tool_hash: { type: 'string' },
    arguments: { type: 'object', additionalProperties: true, description: 'the arguments the call runs with (edited ones once an approver edited them)' },
    arguments_hash: { type: 'string', description: 'SHA-256 of the RFC 8785 JSON of the asked arguments' },
    requested_arguments: { type: ['object', 'null'], additionalProperties: true, description: 'the asked arguments, when an approver edited them' },
    caller: { type: ['string', 'null'] },
    user: { type: ['string', 'null'] },
    session_id: { type: ['string', 'null'] },
    call_id: { type: 'string' },
    rule: { type: ['integer', 'null'], description: "position in policy: from 0; null: the tool's own approval:" },
    approvers: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time' },
    decision: {
      type: ['object', 'null'],
      properties: {
        by: { type: 'string' },
        at: { type: 'string', format: 'date-time' },
        note: { type: ['string', 'null'] },
        arguments_edited: { type: 'boolean' },
      },
      required: ['by', 'at', 'note', 'arguments_edited'],
    },
    result: { ...anyJson, description: 'the invocation result, once executed' },
    may_decide: { type: 'boolean', description: 'whether the key asking may decide it' },
  },
  required: [
    'approval_id',
    'status',
    'tool',
    'tool_hash',
    'arguments',
    'arguments_hash',
    'caller',
    'session_id',
    'call_id',
    'rule',
    'approvers',
    'created_at',
    'expires_at',
    'decision',
  ],
};

type Access = 'decide' | 'read' | 'none';

/** What a principal may do with an approval. Open service (no keys): anyone decides. */
export function accessTo(record: ApprovalRecord, principal: Principal | null): Access {
  if (principal === null) return 'decide';
  if (record.caller !== null && record.caller === principal.id) return 'read';
  return mayDecide(principal, record.approvers) ? 'decide' : 'none';
}

function principalOf(request: FastifyRequest): Principal | null {
  return request.caller?.principal ?? null;
}

interface DecisionBody {
  decision: 'approve' | 'deny';
  note: string | null;
  arguments: Record<string, unknown> | null;
}

function decisionOf(body: unknown): DecisionBody {
  if (!isObject(body)) throw new InvalidBody('send {"decision": "approve" | "deny", "note"?, "arguments"?}');
  const unknown = Object.keys(body).find((k) => !['decision', 'note', 'arguments'].includes(k));
  if (unknown !== undefined) throw new InvalidBody(`unknown field "${unknown}" (fields: decision, note, arguments)`);
  if (body.decision !== 'approve' && body.decision !== 'deny') throw new InvalidBody('decision must be "approve" or "deny"');
  if (body.note !== undefined && body.note !== null && (typeof body.note !== 'string' || body.note.length > MAX_NOTE_CHARS))
    throw new InvalidBody(`note must be a string of at most ${MAX_NOTE_CHARS} characters`);
  if (body.arguments !== undefined && !isObject(body.arguments)) throw new InvalidBody('arguments must be an object');
  if (body.arguments !== undefined && body.decision !== 'approve') throw new InvalidBody('arguments go with "approve" only');
  return {
    decision: body.decision,
    note: (body.note as string | undefined) ?? null,
    arguments: (body.arguments as Record<string, unknown> | undefined) ?? null,
  };
}

/** A decision on a visible approval: the first one stands; approved arguments are validated against the tool schema. */
async function decide(request: FastifyRequest, record: ApprovalRecord, access: Access, approvals: Approvals, registry: ToolRegistry): Promise<ApprovalRecord> {
  const principal = principalOf(request);
  if (access !== 'decide') throw new Forbidden('the caller that asked for an approval may read it but not decide it');
  const body = decisionOf(request.body);
  if (record.status !== 'pending') throw new AlreadyDecided(`approval ${record.approval_id} is ${record.status}: its outcome stands`);
  let edited: Record<string, unknown> | null = null;
  if (body.arguments !== null) {
    const tool = registry.get(record.tool);
    if (tool === undefined) throw new AlreadyDecided(`tool "${record.tool}" is no longer served: approve without arguments or deny`);
    if (!tool.validateParams(body.arguments))
      throw new InvalidArguments(`the arguments do not satisfy the schema of tool "${tool.name}": ${violations(tool.validateParams.errors).join('; ')}`);
    edited = body.arguments;
  }
  const decided: ApprovalRecord = {
    ...record,
    status: body.decision === 'approve' ? 'approved' : 'denied',
    ...(edited !== null && { arguments: edited, requested_arguments: record.arguments }),
    decision: { by: principal?.id ?? 'anonymous', at: new Date().toISOString(), note: body.note, arguments_edited: edited !== null },
  };
  const outcome = await approvals.decide(record, decided);
  if ('conflict' in outcome) {
    if (outcome.conflict === 'missing') throw new NotFound(`no approval ${record.approval_id}`);
    throw new AlreadyDecided(`approval ${record.approval_id} is ${outcome.conflict}: its outcome stands`);
  }
  request.log.info({ event: 'ApprovalDecided', approval: record.approval_id, status: decided.status, by: decided.decision!.by }, 'approval decided');
  return outcome.record;
}

export async function approvalRoutes(
  app: FastifyInstance,
  { approvals, registry }: { approvals: Approvals; registry: ToolRegistry; keysConfigured: boolean },
): Promise<void> {
  app.addSchema(approvalSchema);
  const view = (record: ApprovalRecord, access: Access) => ({ ...record, status: effectiveStatus(record), may_decide: access === 'decide' });

  async function visible(request: FastifyRequest, id: string): Promise<{ record: ApprovalRecord; access: Access }> {
    const record = await approvals.read(id);
    const access = record === null ? 'none' : accessTo(record, principalOf(request));
    if (record === null || access === 'none') throw new NotFound(`no approval ${id}`);
    return { record, access };
  }

  const idParams = { type: 'object', properties: { id: { type: 'string', maxLength: 64 } }, required: ['id'] };
  const one = { 200: { description: 'the approval', content: { 'application/json': { schema: { $ref: 'Approval#' } } } } };

  app.get<{ Querystring: { status?: string; limit?: string } }>(
    '/approvals',
    {
      schema: {
        summary: 'Approvals this key may decide, and its own requests, newest first',
        operationId: 'listApprovals',
        tags: ['approvals'],
        querystring: {
          type: 'object',
          properties: {
            status: { type: 'string', enum: STATUSES },
            limit: { type: 'string', pattern: '^(?:[1-9]|[1-9][0-9]|1[0-9]{2}|200)$', description: `at most this many (≤ ${MAX_LISTED}, default 50)` },
          },
        },
        response: {
          200: { type: 'object', properties: { approvals: { type: 'array', items: { $ref: 'Approval#' } } }, required: ['approvals'] },
          ...problemResponses(400, 401, 503),
        },
      },
    },
    async (request) => {
      const limit = request.query.limit === undefined ? 50 : Number(request.query.limit);
      if (limit < 1 || limit > MAX_LISTED) throw new InvalidQuery(`limit must be from 1 to ${MAX_LISTED}`);
      const principal = principalOf(request);
      const listed = [];
      for (const record of await approvals.recent(MAX_LISTED * 5)) {
        const access = accessTo(record, principal);
        if (access === 'none' || (request.query.status !== undefined && effectiveStatus(record) !== request.query.status)) continue;
        listed.push(view(record, access));
        if (listed.length >= limit) break;
      }
      return { approvals: listed };
    },
  );

  app.get<{ Params: { id: string } }>(
    '/approvals/:id',
    {
      schema: {
        summary: 'One approval',
        operationId: 'getApproval',
        tags: ['approvals'],
        params: idParams,
        response: { ...one, ...problemResponses(401, 404, 503) },
      },
    },
    async (request) => {
      const { record, access } = await visible(request, request.params.id);
      return view(record, access);
    },
  );

  app.post<{ Params: { id: string } }>(
    '/approvals/:id/decision',
    {
      schema: {
        summary: 'Approve or deny a pending approval (once: the first decision stands)',
        description: '`arguments` (approve only) replaces the arguments after validation against the tool schema; the record keeps both.',
        operationId: 'decideApproval',
        tags: ['approvals'],
        params: idParams,
        body: {
          type: 'object',
          properties: {
            decision: { type: 'string', enum: ['approve', 'deny'] },
            note: { type: 'string' },
            arguments: { type: 'object', additionalProperties: true },
          },
          required: ['decision'],
        },
        response: { ...one, ...problemResponses(400, 401, 403, 404, 409, 422, 503) },
      },
      validatorCompiler: documentOnly,
    },
    async (request) => {
      const { record, access } = await visible(request, request.params.id);
      return view(await decide(request, record, access, approvals, registry), access);
    },
  );
}
