/** Who calls, whatever proved it (an API key today); what policies and ownership checks look at. */
export interface Principal {
  /** The API key's id (or the signed-in subject): the `caller` named in logs, records and metrics. */
  readonly id: string;
  /** The person behind the call when known; null for an API key. */
  readonly user: string | null;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
  readonly admin: boolean;
}

const NONE: readonly string[] = Object.freeze([]);

/** An API key's principal: its id and admin flag, no user, groups or scopes. */
export function keyPrincipal(id: string, admin: boolean): Principal {
  return Object.freeze({ id, user: null, groups: NONE, scopes: NONE, admin });
}

/** Whether `principal` is among a rule's `approvers` (admin keys always are; `client` is the MCP client's person, never a key). */
export function mayDecide(principal: Principal, approvers: readonly string[]): boolean {
  if (principal.admin) return true;
  for (const approver of approvers) {
    if (approver === 'client' || approver === 'admin') continue;
    if (approver === principal.id || principal.groups.includes(approver)) return true;
  }
  return false;
}
