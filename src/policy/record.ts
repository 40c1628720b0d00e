/** An approval as it is kept, listed and sent (docs/approvals.md), and how results name it. */
import { isObject } from '../json.ts';
import type { ApprovalStatus } from '../store/approvals.ts';
import type { ApprovalRef, ResultAnswer } from '../tools/outcome.ts';

export interface ApprovalDecision {
  by: string;
  at: string;
  note: string | null;
  arguments_edited: boolean;
}

export interface ApprovalRecord {
  approval_id: string;
  status: ApprovalStatus;
  tool: string;
  tool_hash: string;
  /** The arguments the call runs with: the asked ones, or the approver's edit. */
  arguments: Record<string, unknown>;
  /** SHA-256 of the RFC 8785 JSON of the asked arguments (what binds identical calls). */
  arguments_hash: string;
  /** The asked arguments when an approver edited them; null otherwise. */
  requested_arguments: Record<string, unknown> | null;
  caller: string | null;
  user: string | null;
  session_id: string | null;
  call_id: string;
  /** Position in `policy:` from 0; null: the tool's own `approval:`. */
  rule: number | null;
  approvers: readonly string[];
  created_at: string;
  expires_at: string;
  decision: ApprovalDecision | null;
  result: ResultAnswer | null;
}

export function approvalRef(record: ApprovalRecord): ApprovalRef {
  return { id: record.approval_id, url: `/approvals/${record.approval_id}`, status: record.status, expires_at: record.expires_at };
}

/** A pending record past its expiry is expired, whether or not a replica has recorded that yet. */
export function effectiveStatus(record: ApprovalRecord, now = Date.now()): ApprovalStatus {
  return record.status === 'pending' && Date.parse(record.expires_at) <= now ? 'expired' : record.status;
}

/** The input request that asks the person at an MCP client to approve: a form with `approve` and `note`. */
export const CLIENT_INPUT_KEY = 'approval';

/** The approval form's `elicitation/create` params; `mode` is named from 2025-11-25 on (null: not named). */
export function approvalForm(record: ApprovalRecord, mode: 'form' | null): Record<string, unknown> {
  return {
    ...(mode !== null && { mode }),
    message: `Approve the call to "${record.tool}" with ${JSON.stringify(record.arguments)}? (approval ${record.approval_id})`,
    requestedSchema: {
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve', description: 'Run this call' }, note: { type: 'string', title: 'Note' } },
      required: ['approve'],
    },
  };
}

/** The person's answer to the approval form (an elicitation result): accept with `approve: true` approves; anything else denies. */
export function clientDecision(answer: unknown): { approve: boolean; note: string | null } {
  const content = isObject(answer) && isObject(answer.content) ? answer.content : {};
  const approve = isObject(answer) && answer.action === 'accept' && content.approve === true;
  return { approve, note: typeof content.note === 'string' ? content.note.slice(0, 2000) : null };
}
