/**
 * A connect link over MCP (docs/credentials.md). A 2026-07-28 client that declares URL-mode
 * elicitation gets the call's answer as `input_required` with one `elicitation/create` in URL
 * mode (multi round-trip requests); a 2025-11-25 client that declared it at initialize gets the
 * URLElicitationRequiredError (-32042) naming the same URL-mode elicitation, which that revision
 * defines for a request that cannot go on until the person has been somewhere (its own example is
 * a third-party authorization). Either way the client shows the link, the person connects, the
 * client retries the same call, which then runs. Every other client reads the link in the error text.
 */
import { randomUUID } from 'node:crypto';
import { isObject } from '../json.ts';
import type { InvocationResult } from '../tools/outcome.ts';
import { declaresElicitation, type ClientCapabilities } from './client-capabilities.ts';
import type { Era } from './era.ts';
import { ErrorCode, META, ProtocolFault, type JsonRpcRequest } from './protocol.ts';

type NeedsAuthorization = InvocationResult & { authorization: NonNullable<InvocationResult['authorization']> };

/** Whether the request's `_meta` client capabilities declare `elicitation.url`. */
export function acceptsUrlElicitation(message: JsonRpcRequest): boolean {
  const meta = message.params?._meta;
  const capabilities = isObject(meta) ? meta[META.clientCapabilities] : undefined;
  const elicitation = isObject(capabilities) ? capabilities.elicitation : undefined;
  return isObject(elicitation) && isObject(elicitation.url);
}

/** The URL-mode `elicitation/create` params of a connect link. */
function connectLinkElicitation({ authorization: { credential, url }, name }: NeedsAuthorization): Record<string, unknown> {
  return {
    mode: 'url',
    elicitationId: randomUUID(),
    url,
    message: `Connect your "${credential}" account so that ${name} can run for you; then the call is retried.`,
  };
}

/** The `input_required` answer of a call that needs a credential: one URL-mode elicitation per link. */
export function connectLinkInputRequired(result: NeedsAuthorization): Record<string, unknown> {
  return {
    resultType: 'input_required',
    inputRequests: { [`connect_${result.authorization.credential}`]: { method: 'elicitation/create', params: connectLinkElicitation(result) } },
  };
}

/** The URLElicitationRequiredError (-32042) of a call that needs a credential, answered in-band. */
export function urlElicitationRequired(result: NeedsAuthorization): ProtocolFault {
  return new ProtocolFault(
    ErrorCode.UrlElicitationRequired,
    `${result.name} needs the user's "${result.authorization.credential}" account connected first`,
    200,
    {
      elicitations: [connectLinkElicitation(result)],
    },
  );
}

/** Where the MCP request came from: its era, its MCP session and its caller. */
export interface AskingClient {
  era: Era;
  sessionKey: string;
  caller: string | null;
}

/**
 * The MCP answer of a call that needs a credential, for a client that can show a URL-mode
 * elicitation: `input_required` (2026-07-28), or thrown as -32042 (a 2025-11-25 session whose
 * client declared `elicitation.url` at initialize). Null: the link is read in the error text.
 */
export async function askToConnect(
  message: JsonRpcRequest,
  result: NeedsAuthorization,
  client: AskingClient,
  declarations: ClientCapabilities | null,
): Promise<Record<string, unknown> | null> {
  if (client.era === 'stateless') return acceptsUrlElicitation(message) ? connectLinkInputRequired(result) : null;
  // Unknown (no session, not remembered, the store unreachable): the error text carries the link.
  const declared = declarations === null ? null : await declarations.recall(client.caller, client.sessionKey).catch(() => null);
  if (declared === null || declared.protocolVersion < '2025-11-25' || !declaresElicitation(declared.capabilities, 'url')) return null;
  throw urlElicitationRequired(result);
}
