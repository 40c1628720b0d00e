/** The Idempotency-Key header (docs/ledger.md) at the HTTP edge: checked, handed to each call, and replays marked. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { InvalidHeader } from '../errors.ts';
import { IDEMPOTENCY_KEY } from '../ledger/key.ts';
import type { ToolCall } from '../tools/invoke.ts';

export function idempotencyKeyOf(request: FastifyRequest): string | null {
  const value = request.headers['idempotency-key'];
  if (value === undefined) return null;
  if (Array.isArray(value) || !IDEMPOTENCY_KEY.test(value)) {
    throw new InvalidHeader('Idempotency-Key must be sent once, as 1 to 255 printable ASCII characters without spaces');
  }
  return value;
}

/**
 * The call with the request's key. In a turn every call gets its own: the key, a colon and the
 * call's position (1, 2, …), so a retried turn replays each call and two calls never share one.
 */
export function keyedCall(call: ToolCall, key: string | null, position?: number): ToolCall {
  if (key === null) return call;
  return { ...call, idempotencyKey: position === undefined ? key : `${key}:${position + 1}` };
}

/** `Idempotent-Replayed: true` when the answer (or, in a turn, any of its results) is a replay. */
export function markReplayed(reply: FastifyReply, body: { replayed?: boolean; results?: { replayed: boolean }[] }): void {
  if (body.replayed === true || body.results?.some((r) => r.replayed) === true) reply.header('idempotent-replayed', 'true');
}
