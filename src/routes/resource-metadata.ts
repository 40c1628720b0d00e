/**
 * OAuth 2.0 Protected Resource Metadata (RFC 9728) for MCP clients (docs/identity.md): where to get a token
 * for this service's /mcp, and which scopes its access rules ask for. Served only with AUTH_ISSUER.
 */
import type { FastifyInstance } from 'fastify';

export interface ResourceMetadataOptions {
  /** PUBLIC_URL, without a trailing slash. */
  publicUrl: string;
  issuer: string;
  scopes: readonly string[];
}

const metadataSchema = {
  type: 'object',
  properties: {
    resource: { type: 'string', description: 'PUBLIC_URL/mcp: the resource tokens are requested for (RFC 8707)' },
    authorization_servers: { type: 'array', items: { type: 'string' } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    bearer_methods_supported: { type: 'array', items: { type: 'string', enum: ['header'] } },
    resource_name: { type: 'string' },
  },
  required: ['resource', 'authorization_servers', 'bearer_methods_supported'],
};

export async function resourceMetadataRoutes(app: FastifyInstance, { publicUrl, issuer, scopes }: ResourceMetadataOptions): Promise<void> {
  const metadata = JSON.stringify({
    resource: `${publicUrl}/mcp`,
    authorization_servers: [issuer],
    scopes_supported: scopes,
    bearer_methods_supported: ['header'],
    resource_name: 'toolport',
  });
  for (const [url, operationId] of [
    ['/.well-known/oauth-protected-resource', 'getProtectedResourceMetadata'],
    ['/.well-known/oauth-protected-resource/mcp', 'getMcpProtectedResourceMetadata'],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          summary: 'OAuth protected resource metadata (RFC 9728) of /mcp',
          operationId,
          tags: ['mcp'],
          security: [],
          response: { 200: metadataSchema },
        },
      },
      // Built once; cached by clients for an hour.
      async (_request, reply) => reply.type('application/json').header('cache-control', 'public, max-age=3600').send(metadata),
    );
  }
}
