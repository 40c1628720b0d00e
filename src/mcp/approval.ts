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
import type { ApprovalRecord } from '../policy/record.ts';
import { hashJson } from '../tools/hash.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { ErrorCode, META, ProtocolFault, type JsonRpcRequest } from './protocol.ts';

const STATE_TTL_MS = 10 * 60_000;
const INPUT_KEY = 'approval';

interface SealedState {
  a: string;
  c: string | null;
  m: string;
  t: string;
  d: string;
  e: number;
  n: string;
}

/** Whether the request's `_meta` client capabilities declare form elicitation (an empty `elicitation` means form). */
export function acceptsFormElicitation(message: JsonRpcRequest): boolean {
  const meta = message.params?._meta;
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  return isObject(elicitation) && (Object.keys(elicitation).length === 0 || isObject(elicitation.form));
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

  async #mac(payload: string): Promise<Buffer> {
    this.#secret ??= this.#approvals.sharedSecret();
    return createHmac('sha256', await this.#secret)
      .update(payload)
      .digest();
  }

  /** The `input_required` answer of a held call the person at the client may decide; null when it is not one. */
  async ask(message: JsonRpcRequest, result: InvocationResult, caller: string | null): Promise<Record<string, unknown> | null> {
    if (result.error?.code !== 'approval_required' || result.approval === undefined || !acceptsFormElicitation(message)) return null;
    const record = await this.#approvals.read(result.approval.id);
    if (record === null || record.status !== 'pending' || !record.approvers.includes('client')) return null;
    const state: SealedState = {
      a: record.approval_id,
      c: caller,
      m: 'tools/call',
      t: record.tool,
      d: hashJson(message.params?.arguments ?? {}),
      e: Date.now() + STATE_TTL_MS,
      n: randomUUID(),
    };
    const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
    const requestState = `${payload}.${(await this.#mac(payload)).toString('base64url')}`;
    return {
      resultType: 'input_required',
      inputRequests: {
        [INPUT_KEY]: {
          method: 'elicitation/create',
          params: {
            mode: 'form',
            message: `Approve the call to "${record.tool}" with ${JSON.stringify(record.arguments)}? (approval ${record.approval_id})`,
            requestedSchema: {
              type: 'object',
              properties: { approve: { type: 'boolean', title: 'Approve', description: 'Run this call' }, note: { type: 'string', title: 'Note' } },
              required: ['approve'],
            },
          },
        },
      },
      requestState,
    };
  }

  /**
   * A retried call carrying `requestState` and `inputResponses`: checks the seal and its bindings,
   * uses it once, and records the person's decision. Throws (JSON-RPC -32602) when it is refused.
   */
  async resume(message: JsonRpcRequest, name: string, caller: string | null): Promise<void> {
    const sealed = message.params?.requestState;
    if (sealed === undefined) return;
    if (typeof sealed !== 'string') return refuse('not a string');
    const [payload, mac] = sealed.split('.');
    if (payload === undefined || mac === undefined) return refuse('malformed');
    const given = Buffer.from(mac, 'base64url');
    const expected = await this.#mac(payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse('its seal does not verify');
    const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SealedState;
    if (state.c !== caller) return refuse('it was issued to another caller');
    if (state.m !== message.method || state.t !== name) return refuse('it was issued for another request');
    if (state.d !== hashJson(message.params?.arguments ?? {})) return refuse('the arguments differ from the call it was issued for');
    if (state.e <= Date.now()) return refuse('it has expired');
    if (!(await this.#approvals.useOnce(state.n, STATE_TTL_MS))) return refuse('it was already used');
    const responses = message.params?.inputResponses;
    const answer = isObject(responses) ? responses[INPUT_KEY] : undefined;
    const content = isObject(answer) && isObject(answer.content) ? answer.content : {};
    const approve = isObject(answer) && answer.action === 'accept' && content.approve === true;
    const note = typeof content.note === 'string' ? content.note.slice(0, 2000) : null;
    const record = await this.#approvals.read(state.a);
    if (record === null || record.status !== 'pending') return; // decided meanwhile: the call reports the outcome
    const decided: ApprovalRecord = {
      ...record,
      status: approve ? 'approved' : 'denied',
      decision: { by: `client:${caller ?? 'anonymous'}`, at: new Date().toISOString(), note, arguments_edited: false },
    };
    await this.#approvals.decide(record, decided);
  }
}
