/**
 * A handler's questions to a 2026-07-28 client (context.elicit, context.sample) as multi round-trip
 * requests: the call answers `input_required` with the questions and a sealed `requestState`
 * (HMAC-SHA256 under the replicas' shared secret) that binds the caller, the tool, the arguments'
 * digest and a short expiry, and carries the answers of earlier rounds. The client retries the same
 * call, on any replica, with `inputResponses`; the handler runs again and finds every answer.
 */
import { timingSafeEqual } from 'node:crypto';
import { isObject } from '../json.ts';
import { hashJson } from '../tools/hash.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { ErrorCode, ProtocolFault, type JsonRpcRequest } from './protocol.ts';

const PREFIX = 'i.';
const STATE_TTL_MS = 10 * 60_000;

interface InputState {
  /** caller, tool, arguments digest, expiry (epoch ms) */
  c: string | null;
  t: string;
  d: string;
  e: number;
  /** the keys asked so far, and what was answered to them */
  k: string[];
  a: Record<string, unknown>;
}

export interface Sealer {
  mac(payload: string): Promise<Buffer>;
}

/** Whether a requestState is one of these (and not an approval's). */
export function isInputState(sealed: unknown): boolean {
  return typeof sealed === 'string' && sealed.startsWith(PREFIX);
}

const refuse = (why: string): never => {
  throw new ProtocolFault(ErrorCode.InvalidParams, `requestState refused: ${why}; nothing ran`);
};

/** The `input_required` answer of a call whose handler asked its client something. */
export async function inputRequired(
  sealer: Sealer,
  message: JsonRpcRequest,
  result: InvocationResult,
  caller: string | null,
  answers: Readonly<Record<string, unknown>> | undefined,
): Promise<Record<string, unknown>> {
  const requests = result.input_requests ?? {};
  const state: InputState = {
    c: caller,
    t: result.name,
    d: hashJson(message.params?.arguments ?? {}),
    e: Date.now() + STATE_TTL_MS,
    k: [...Object.keys(answers ?? {}), ...Object.keys(requests)],
    a: { ...answers },
  };
  const payload = Buffer.from(JSON.stringify(state)).toString('base64url');
  const requestState = `${PREFIX}${payload}.${(await sealer.mac(payload)).toString('base64url')}`;
  return { resultType: 'input_required', inputRequests: requests, requestState };
}

/**
 * The answers a retried call carries: those of earlier rounds (from its sealed state) and this
 * round's `inputResponses` to keys that were asked. Undefined without a state of ours; throws
 * (JSON-RPC -32602) when the state is forged, expired, or issued for another caller or call.
 */
export async function answersOf(sealer: Sealer, message: JsonRpcRequest, name: string, caller: string | null): Promise<Record<string, unknown> | undefined> {
  const sealed = message.params?.requestState;
  if (!isInputState(sealed)) return undefined;
  const [payload, mac] = (sealed as string).slice(PREFIX.length).split('.');
  if (payload === undefined || mac === undefined) return refuse('malformed');
  const given = Buffer.from(mac, 'base64url');
  const expected = await sealer.mac(payload);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return refuse('its seal does not verify');
  const state = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as InputState;
  if (state.c !== caller) return refuse('it was issued to another caller');
  if (state.t !== name || state.d !== hashJson(message.params?.arguments ?? {})) return refuse('it was issued for another call');
  if (state.e <= Date.now()) return refuse('it has expired');
  const responses = message.params?.inputResponses;
  const answers = { ...state.a };
  if (isObject(responses)) for (const key of state.k) if (responses[key] !== undefined && answers[key] === undefined) answers[key] = responses[key];
  return answers;
}
