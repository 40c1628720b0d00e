/**
 * A connect link over MCP (docs/credentials.md). A 2026-07-28 client that declares URL-mode
 * elicitation gets the call's answer as `input_required` with one `elicitation/create` in URL
 * mode (multi round-trip requests): the client shows the link, the person connects, the client
 * retries the same call, which then runs. Every other client reads the link in the error text.
 */
import { randomUUID } from 'node:crypto';
import { isObject } from '../json.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { META, type JsonRpcRequest } from './protocol.ts';

/** Whether the request's `_meta` client capabilities declare `elicitation.url`. */
export function acceptsUrlElicitation(message: JsonRpcRequest): boolean {
  const meta = message.params?._meta;
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  return isObject(elicitation) && isObject(elicitation.url);
}

/** The `input_required` answer of a call that needs a credential: one URL-mode elicitation per link. */
export function connectLinkInputRequired(
  result: InvocationResult & { authorization: NonNullable<InvocationResult['authorization']> },
): Record<string, unknown> {
  const { credential, url } = result.authorization;
  return {
    resultType: 'input_required',
    inputRequests: {
      [`connect_${credential}`]: {
        method: 'elicitation/create',
        params: {
          mode: 'url',
          elicitationId: randomUUID(),
          url,
          message: `Connect your "${credential}" account so that ${result.name} can run for you; then the call is retried.`,
        },
      },
    },
  };
}
