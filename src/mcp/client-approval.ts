/**
 * Approvals asked of the person at a handshake-era MCP client (2025-06-18, 2025-11-25) that declared
 * form elicitation at initialize: inside the held `tools/call`, on its SSE answer, the server sends
 * `elicitation/create` (a form with `approve` and `note`) whose id is a sealed state (bound to the
 * caller and the approval, short-lived, used once). The client's answer arrives as a JSON-RPC
 * response in a POST of its own, on any replica; it decides the approval in the store, and the call
 * waiting for it (woken at once on this replica, or by polling the store) then runs or reports the
 * outcome. A client that cannot be asked reads the approval id in the error text.
 */
import type { Approvals } from '../policy/approvals.ts';
import type { ApprovalRecord } from '../policy/record.ts';
import type { Cancellation } from '../tools/context.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { McpApprovals } from './approval.ts';
import { approvalForm } from '../policy/record.ts';
import { ClientCapabilities, declaresElicitation } from './client-capabilities.ts';
import type { McpClientStore } from '../store/mcp-clients.ts';
import { ProtocolFault, type JsonRpcClientResponse, type JsonRpcRequest } from './protocol.ts';

const METHOD = 'elicitation/create';
/** How often a waiting call looks for a decision made elsewhere (another replica, /approvals, the console). */
const POLL_MS = 250;
/** How long a call waits for the person at the client before it answers `approval_required` after all. */
const WAIT_MS = 10 * 60_000;

/** Handshake-era clients: what each declared at initialize, and approvals asked of the person at one. */
export interface McpClients {
  capabilities: ClientCapabilities;
  approvals: ClientApprovals | null;
}

/** The MCP routes' approvals: 2026-07-28 clients are asked in `input_required`, handshake-era ones by elicitation/create. */
export function mcpApprovalOptions(approvals: Approvals, store: McpClientStore, sessionTtlS: number): { approvals: McpApprovals; clients: McpClients } {
  const sealed = new McpApprovals(approvals);
  const capabilities = new ClientCapabilities(store, sessionTtlS * 1000);
  return { approvals: sealed, clients: { capabilities, approvals: new ClientApprovals(sealed, approvals, capabilities) } };
}

export interface ClientQuestion {
  /** The caller's MCP session (its Mcp-Session-Id, or X-Session-Id). */
  sessionKey: string;
  caller: string | null;
  /** Sends a request to the client within the call's answer. */
  ask: (request: JsonRpcRequest) => void;
  /** Fires when the client goes away. */
  cancellation: Cancellation | null;
}

export class ClientApprovals {
  readonly #sealed: McpApprovals;
  readonly #approvals: Approvals;
  readonly #clients: ClientCapabilities;
  /** Calls waiting on this replica, by the nonce of the state they sent: woken as soon as the answer lands here. */
  readonly #waiting = new Map<string, () => void>();

  constructor(sealed: McpApprovals, approvals: Approvals, clients: ClientCapabilities) {
    this.#sealed = sealed;
    this.#approvals = approvals;
    this.#clients = clients;
  }

  /**
   * Asks the person at the client about the held call's approval and waits for a decision: true
   * once it is decided (by the client or anyone else), false when nothing was asked or no one decided in time.
   */
  async ask(result: InvocationResult, question: ClientQuestion): Promise<boolean> {
    const record = await this.#sealed.askable(result);
    if (record === null) return false;
    const declared = await this.#clients.recall(question.caller, question.sessionKey);
    if (declared === null || !declaresElicitation(declared.capabilities, 'form')) return false;
    const state = McpApprovals.stateFor(record, question.caller, METHOD, null);
    const id = await this.#sealed.seal(state);
    const form = approvalForm(record, declared.protocolVersion >= '2025-11-25' ? 'form' : null);
    question.ask({ jsonrpc: '2.0', id, method: METHOD, params: form });
    try {
      return await this.#decided(record, state.n, question.cancellation);
    } finally {
      this.#waiting.delete(state.n);
    }
  }

  /** A client's answer to an approval form: decides the approval it was sent for. Anything else is ignored. */
  async answered(response: JsonRpcClientResponse, caller: string | null): Promise<void> {
    if (typeof response.id !== 'string' || !response.id.includes('.')) return;
    let state;
    try {
      state = await this.#sealed.unseal(response.id, caller, METHOD);
    } catch (err) {
      if (err instanceof ProtocolFault) return; // not ours, forged, replayed or late: nothing to decide
      throw err;
    }
    // An error answer (the client could not show the form) declines, as a cancel does.
    await this.#sealed.decideByClient(state, response.result, caller);
    this.#waiting.get(state.n)?.();
  }

  /** Waits until the approval is no longer pending; false when the client went away or no one decided in time. */
  async #decided(record: ApprovalRecord, nonce: string, cancellation: Cancellation | null): Promise<boolean> {
    const until = Date.now() + WAIT_MS;
    cancellation?.watch();
    let wake: () => void = () => undefined;
    this.#waiting.set(nonce, () => wake());
    while (Date.now() < until && cancellation?.reason == null) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const now = await this.#approvals.read(record.approval_id);
      if (now === null || now.status !== 'pending') return true;
    }
    return false;
  }
}
