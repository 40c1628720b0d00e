/** An approval as it is kept, listed and sent (SPEC §14), and how results name it. */
import type { ApprovalStatus } from '../store/approvals.ts';
import type { ApprovalRef, InvocationResult } from '../tools/outcome.ts';

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
  result: InvocationResult | null;
}

export function approvalRef(record: ApprovalRecord): ApprovalRef {
  return { id: record.approval_id, url: `/approvals/${record.approval_id}`, status: record.status, expires_at: record.expires_at };
}

/** A pending record past its expiry is expired, whether or not a replica has recorded that yet. */
export function effectiveStatus(record: ApprovalRecord, now = Date.now()): ApprovalStatus {
  return record.status === 'pending' && Date.parse(record.expires_at) <= now ? 'expired' : record.status;
}
