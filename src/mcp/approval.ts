/**
 * Approvals over MCP 2026-07-28 (multi round-trip requests): a held call whose rule names `client`
 * as an approver, from a client that declares form elicitation, answers `input_required` with a
 * form (`approve`, `note`) and a sealed `requestState`: HMAC-SHA256 over the caller, method, tool,
 * arguments digest, approval id, a short expiry and a nonce used once (kept in the store). The
 * retried call carries `inputResponses` and the state; a forged, replayed, expired or mismatched
 * state is refused before anything runs. Other clients read the approval id in the error text.
 */
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { isObject } from '../json.ts';
import type { Approvals } from '../policy/approvals.ts';
import { approvalForm, CLIENT_INPUT_KEY as INPUT_KEY, type ApprovalRecord } from '../policy/record.ts';
import { hashJson } from '../tools/hash.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { ErrorCode, META, metaOf, ProtocolFault, type JsonRpcRequest } from './protocol.ts';
import { declaresElicitation } from './client-capabilities.ts';
import { isInputState } from './input-state.ts';

const STATE_TTL_MS = 10 * 60_000;

export interface SealedState {
  a: string;
  c: string | null;
  m: string;
  t: string;
  d: string;
  e: number;
  n: string;
}

const refuse = (why: string): never => {
  throw new ProtocolFault(ErrorCode.InvalidParams, `requestState refused: ${why}; nothing ran`);
};

export class McpApprovals {
  readonly #approvals: Approvals;
  #secret: Promise<string> | null = null;

  constructor(approvals: Approvals) {
    this.#approvals = approvals;
  }

  /** The HMAC of `payload` under the replicas' shared secret (also seals other request states: src/mcp/input-state.ts). */
  async mac(payload: string): Promise<Buffer> {
    this.#secret ??= this.#approvals.sharedSecret();
    return createHmac('sha256', await this.#secret)
      .update(payload)
      .digest();
  }

  /** The state as a sealed string: its JSON in base64url, a dot, and its HMAC. */
  async seal(state: SealedState): Promise<string> {
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    return `${payload}.${(await this.mac(payload)).toString('base64url')}`;
  }

  /** A fresh state for one question about `record` to the caller's client (`method`: where it travels). */
  static stateFor(record: ApprovalRecord, caller: string | null, method: string, args: unknown): SealedState {
    return { a: record.approval_id, c: caller, m: method, t: record.tool, d: hashJson(args ?? {}), e: Date.now() + STATE_TTL_MS, n: randomUUID() };
  }

  /** The sealed state's content once its seal, caller, method and expiry check out, used once; throws (JSON-RPC -32602) otherwise. */
  async unseal(sealed: unknown, caller: string | null, method: string, check?: (state: SealedState) => void): Promise<SealedState> {
    if (typeof sealed !== 'string') return refuse('not a string');
    const [payload, mac] = sealed.split('.');
    if (payload === undefined || mac === undefined) return refuse('malformed');
    const given = Buffer.from(mac, 'base64url');
    const expected = await this.mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse('its seal does not verify');
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SealedState;
    if (state.c !== caller) return refuse('it was issued to another caller');
    if (state.m !== method) return refuse('it was issued for another request');
    if (state.e <= Date.now()) return refuse('it has expired');
    check?.(state);
    if (!(await this.#approvals.useOnce(state.n, STATE_TTL_MS))) return refuse('it was already used');
    return state;
  }

  /** The person's answer to the approval form (an elicitation result) decides the approval the state was sealed for. */
  async decideByClient(state: SealedState, answer: unknown, caller: string | null): Promise<void> {
    const record = await this.#approvals.read(state.a);
    if (record !== null) await this.#approvals.decideByClient(record, answer, caller);
  }

  /** The pending approval a held call's result names, when the person at the client may decide it; null otherwise. */
  async askable(result: InvocationResult): Promise<ApprovalRecord | null> {
    if (result.error?.code !== 'approval_required' || result.approval === undefined) return null;
    const record = await this.#approvals.read(result.approval.id);
    return record !== null && record.status === 'pending' && record.approvers.includes('client') ? record : null;
  }

  /** The `input_required` answer of a held call the person at the client may decide; null when it is not one. */
  async ask(message: JsonRpcRequest, result: InvocationResult, caller: string | null): Promise<Record<string, unknown> | null> {
    if (!declaresElicitation(metaOf(message.params)?.[META.clientCapabilities], 'form')) return null;
    const record = await this.askable(result);
    if (record === null) return null;
    const requestState = await this.seal(McpApprovals.stateFor(record, caller, 'tools/call', message.params?.arguments));
    return {
      resultType: 'input_required',
      inputRequests: { [INPUT_KEY]: { method: 'elicitation/create', params: approvalForm(record, 'form') } },
      requestState,
    };
  }

  /**
   * A retried call carrying `requestState` and `inputResponses`: checks the seal and its bindings,
   * uses it once, and records the person's decision. Throws (JSON-RPC -32602) when it is refused.
   */
  async resume(message: JsonRpcRequest, name: string, caller: string | null): Promise<void> {
    const sealed = message.params?.requestState;
    // A state of a handler's own question (src/mcp/input-state.ts) is not an approval's.
    if (sealed === undefined || isInputState(sealed)) return;
    const state = await this.unseal(sealed, caller, message.method, (issued) => {
      if (issued.t !== name) refuse('it was issued for another request');
      if (issued.d !== hashJson(message.params?.arguments ?? {})) refuse('the arguments differ from the call it was issued for');
    });
    const responses = message.params?.inputResponses;
    await this.decideByClient(state, isObject(responses) ? responses[INPUT_KEY] : undefined, caller);
  }
}
