/** Who calls, whatever proved it (an API key, a user's token): what policies and ownership checks look at. */
export interface Principal {
  /** The API key's id (or the signed-in subject): the `caller` named in logs, records and metrics. */
  readonly id: string;
  /** The person behind the call when known; null for an API key. */
  readonly user: string | null;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
  readonly admin: boolean;
}

/** A verified user as handlers see it (`context.user`): the token's subject, groups and claims. */
export interface UserIdentity {
  readonly id: string;
  readonly groups: readonly string[];
  readonly claims: Readonly<Record<string, unknown>>;
}

/** Who is calling: the key's or user's id and what it may do. */
export interface Caller {
  readonly id: string;
  /** Callers with the same key see the same tools (a key's id; a user's groups). */
  readonly catalogKey: string;
  readonly admin: boolean;
  readonly ratePerMin: number | null;
  /** The toolsets an API key is bound to; null or absent = not bound (every toolset). */
  readonly toolsets?: readonly string[] | null;
  readonly principal: Principal;
  /** The verified user; null for an API key. */
  readonly user: UserIdentity | null;
  /** Whether this caller may see the tool (and call it, unless a scope is missing). */
  allows(toolName: string): boolean;
  /** The scope the caller's token lacks to call a tool it sees; null when nothing is missing. */
  missingScope(toolName: string): string | null;
  /** Whether this caller may call the tool: it sees it and lacks no scope for it. */
  mayCall(toolName: string): boolean;
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
