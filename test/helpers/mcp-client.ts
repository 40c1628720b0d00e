/**
 * The official MCP clients, unchanged, behind one small interface: v1 (@modelcontextprotocol/sdk,
 * the handshake era) and v2 (@modelcontextprotocol/client) in legacy mode, `auto` mode and pinned
 * to the stateless revision 2026-07-28. Options are the transports' own (headers, fetch, sessionId).
 */
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';

export type Flavour = 'v1' | 'v2 legacy' | 'v2 auto' | 'v2 pinned 2026-07-28';
export const FLAVOURS: Flavour[] = ['v1', 'v2 legacy', 'v2 auto', 'v2 pinned 2026-07-28'];

/** The flavours that speak the stateless revision, which has no protocol session. */
export function isStateless(flavour: Flavour): boolean {
  return flavour === 'v2 auto' || flavour === 'v2 pinned 2026-07-28';
}

export interface ConnectOptions {
  headers?: Record<string, string>;
  fetch?: typeof fetch;
  sessionId?: string;
}

export interface McpTestClient {
  protocolVersion(): string | undefined;
  /** The Mcp-Session-Id the server issued (or the transport was given); undefined without one. */
  sessionId(): string | undefined;
  callTool(name: string, args: Record<string, unknown>): Promise<Record<string, any>>;
  readResource(uri: string): Promise<Record<string, any>>;
  /** DELETE /mcp with the session id, as the transports do it. */
  terminateSession(): Promise<void>;
  close(): Promise<void>;
}

const INFO = { name: 'toolport-test', version: '1.0.0' };

export async function connectMcp(flavour: Flavour, url: URL, options: ConnectOptions = {}): Promise<McpTestClient> {
  const transportOptions = {
    requestInit: { headers: options.headers ?? {} },
    ...(options.fetch && { fetch: options.fetch }),
    ...(options.sessionId !== undefined && { sessionId: options.sessionId }),
  };
  if (flavour === 'v1') {
    const client = new ClientV1(INFO);
    const transport = new TransportV1(url, transportOptions);
    await client.connect(transport);
    return {
      protocolVersion: () => transport.protocolVersion,
      sessionId: () => transport.sessionId,
      callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as Record<string, any>,
      readResource: async (uri) => (await client.readResource({ uri })) as Record<string, any>,
      terminateSession: () => transport.terminateSession(),
      close: () => client.close(),
    };
  }
  const mode = flavour === 'v2 auto' ? 'auto' : flavour === 'v2 legacy' ? 'legacy' : { pin: '2026-07-28' };
  const client = new ClientV2(INFO, { versionNegotiation: { mode } });
  const transport = new TransportV2(url, transportOptions);
  await client.connect(transport);
  return {
    protocolVersion: () => client.getNegotiatedProtocolVersion(),
    sessionId: () => transport.sessionId,
    callTool: async (name, args) => (await client.callTool({ name, arguments: args })) as Record<string, any>,
    readResource: async (uri) => (await client.readResource({ uri })) as Record<string, any>,
    terminateSession: () => transport.terminateSession(),
    close: () => client.close(),
  };
}

/** A fetch that sends each request to the next of `bases` in turn (replicas behind a round-robin balancer). */
export function roundRobin(bases: readonly string[]): { fetch: typeof fetch; served: number[] } {
  const served = bases.map(() => 0);
  let next = 0;
  const balanced = (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const i = next++ % bases.length;
    served[i]!++;
    const given = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    const target = new URL(given.pathname + given.search, bases[i]);
    return input instanceof Request ? fetch(new Request(target, input), init) : fetch(target, init);
  };
  return { fetch: balanced as typeof fetch, served };
}
