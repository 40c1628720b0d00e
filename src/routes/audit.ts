/**
 * GET /audit (docs/audit.md): the audit log, newest first, for admins — filtered by kind, tool,
 * caller, outcome and time, a page at a time (`cursor`: the seq the next page starts below).
 */
import type { FastifyInstance } from 'fastify';
import type { AuditLog, StoredAuditEntry } from '../store/audit.ts';
import { problemResponses } from '../schemas.ts';

const MAX_LIMIT = 500;
/** Entries read at most per request while filtering; a page may then be short, with a cursor to go on. */
const MAX_SCANNED = 10_000;
const READ_PAGE = 500;

const nullableString = { type: ['string', 'null'] };
/** An ISO 8601 UTC time, to the second or the millisecond (what `at` holds). */
const DATE_TIME = '^\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])T([01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(\\.\\d{1,3})?Z$';

const auditEntrySchema = {
  type: 'object',
  properties: {
    seq: { type: 'integer', description: "the entry's place in the chain, from 1" },
    prev: { type: 'string', description: 'the hash of the entry before ("" for the first)' },
    hash: { type: 'string', description: "SHA-1 of prev, a newline and the entry's JSON without seq, prev and hash" },
    at: { type: 'string', format: 'date-time' },
    kind: { type: 'string', enum: ['call', 'policy', 'guardrail', 'approval', 'credential', 'admin'] },
    caller: { ...nullableString, description: 'the API key or signed-in caller' },
    user: { ...nullableString, description: 'the person, when known' },
    on_behalf_of: { ...nullableString, description: 'whose call an approval decided, whose credential changed' },
    tool: nullableString,
    tool_hash: nullableString,
    arguments_hash: { ...nullableString, description: 'SHA-256 of the RFC 8785 JSON of the arguments' },
    arguments: { description: 'the arguments themselves, only with AUDIT_ARGUMENTS=true' },
    approval_id: nullableString,
    rule: { ...nullableString, description: "the policy rule that decided (`policy[2]`, or `approval` for a tool's own)" },
    outcome: {
      type: 'string',
      description: "`success` or the error code of a call; approved, denied, expired; connected, disconnected; an admin request's HTTP status",
    },
    call_id: nullableString,
    request_id: nullableString,
    detail: { ...nullableString, description: "a credential's name, an admin request's method and path" },
  },
  required: ['seq', 'prev', 'hash', 'at', 'kind', 'caller', 'outcome'],
};

interface AuditQuery {
  limit: number;
  cursor?: number;
  kind?: string;
  tool?: string;
  caller?: string;
  outcome?: string;
  since?: string;
  until?: string;
}

type Shown = Record<string, unknown> & { at: string };

function shown(entry: StoredAuditEntry): Shown | null {
  try {
    return { seq: entry.seq, prev: entry.prev, hash: entry.hash, ...(JSON.parse(entry.body) as Record<string, unknown>) } as unknown as Shown;
  } catch {
    return null;
  }
}

function keeps(query: AuditQuery, entry: Shown): boolean {
  return (
    (query.kind === undefined || entry.kind === query.kind) &&
    (query.tool === undefined || entry.tool === query.tool) &&
    (query.caller === undefined || entry.caller === query.caller) &&
    (query.outcome === undefined || entry.outcome === query.outcome) &&
    (query.until === undefined || entry.at <= query.until)
  );
}

/** A time as entries hold it (milliseconds always written), so that times compare as text. */
function asStored(time: string): string {
  const dot = time.indexOf('.');
  const ms = dot === -1 ? '' : time.slice(dot + 1, -1);
  return `${time.slice(0, 19)}.${ms.padEnd(3, '0')}Z`;
}

/** Up to `limit` entries the filters keep, newest first, and where the next page starts (null: no more). */
export async function auditPage(log: AuditLog, query: AuditQuery): Promise<{ entries: Shown[]; next_cursor: number | null }> {
  const since = query.since === undefined ? null : asStored(query.since);
  const until = query.until === undefined ? undefined : asStored(query.until);
  const filters = { ...query, ...(until !== undefined && { until }) };
  const entries: Shown[] = [];
  let before = query.cursor ?? null;
  let scanned = 0;
  while (scanned < MAX_SCANNED) {
    const page = await log.newest(before, READ_PAGE);
    for (const stored of page) {
      before = stored.seq;
      scanned++;
      const entry = shown(stored);
      if (entry === null) continue;
      if (since !== null && entry.at < since) return { entries, next_cursor: null };
      if (keeps(filters, entry)) entries.push(entry);
      if (entries.length === query.limit) return { entries, next_cursor: before > 1 ? before : null };
    }
    if (page.length < READ_PAGE) return { entries, next_cursor: null };
  }
  return { entries, next_cursor: before };
}

export async function auditRoutes(app: FastifyInstance, { log }: { log: AuditLog }): Promise<void> {
  app.get<{ Querystring: AuditQuery }>(
    '/audit',
    {
      config: { admin: true },
      schema: {
        summary: 'The audit log, newest first: calls, policy and guardrail decisions, approvals, credentials and admin actions',
        operationId: 'listAudit',
        tags: ['audit'],
        querystring: {
          type: 'object',
          properties: {
            limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: 100 },
            cursor: { type: 'integer', minimum: 1, description: 'next_cursor of the page before: entries below this seq' },
            kind: { type: 'string', enum: ['call', 'policy', 'guardrail', 'approval', 'credential', 'admin'] },
            tool: { type: 'string', maxLength: 256 },
            caller: { type: 'string', maxLength: 300 },
            outcome: { type: 'string', maxLength: 64 },
            since: { type: 'string', pattern: DATE_TIME, description: 'only entries at or after this time (UTC, e.g. 2026-11-28T09:00:00Z)' },
            until: { type: 'string', pattern: DATE_TIME, description: 'only entries at or before this time (UTC)' },
          },
        },
        response: {
          200: {
            type: 'object',
            properties: {
              entries: { type: 'array', items: auditEntrySchema },
              next_cursor: { type: ['integer', 'null'], description: 'pass as cursor for the next page; null on the last' },
            },
            required: ['entries', 'next_cursor'],
          },
          ...problemResponses(503),
        },
      },
    },
    (request) => auditPage(log, request.query),
  );
}
