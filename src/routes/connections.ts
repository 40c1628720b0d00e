/**
 * Connecting credentials (docs/credentials.md). A person opens the single-use link a call answered
 * with (connect-link.ts: a confirmation page, then the provider or the secret's form); the callback
 * stores the grant or value for the user the link was made for. `/me/…`: the
 * caller's own connections — names, scopes, expiry, never a secret — and a connect link on demand.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CredentialDefinition, OAuth2Definition } from '../credentials/definitions.ts';
import { exchangeCode } from '../credentials/oauth.ts';
import { displayName } from '../credentials/stage.ts';
import { LINK_TTL_MS, type Vault } from '../credentials/vault.ts';
import { Forbidden, InvalidBody, LinkRefused, NotFound, ProviderError } from '../errors.ts';
import { problemResponses } from '../schemas.ts';
import { connectLinkRoutes, nameParams, ownerOf, page, STATE_COOKIE } from './connect-link.ts';

const MAX_SECRET_CHARS = 8192;

const connectionSchema = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    type: { type: 'string', enum: ['oauth2', 'secret'] },
    scopes: { type: 'array', items: { type: 'string' } },
    expires_at: { type: ['string', 'null'], format: 'date-time', description: 'when the access token expires (it is refreshed before); null for a secret' },
    updated_at: { type: 'string', format: 'date-time' },
  },
  required: ['name', 'type', 'scopes', 'expires_at', 'updated_at'],
};

function cookieOf(request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie ?? '';
  for (const part of header.split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

export interface ConnectionRoutesOptions {
  /** Null when TOOLS_FILE declares no credentials: the list is empty and every name unknown. */
  vault: Vault | null;
  publicUrl: string;
}

/** Serves nothing while the service has no vault, whatever its name. */
const NO_VAULT = {
  definition: () => undefined,
  definitions: new Map<string, CredentialDefinition>(),
  connections: async () => [],
  forget: async () => false,
};

export async function connectionRoutes(app: FastifyInstance, options: ConnectionRoutesOptions): Promise<void> {
  const publicUrl = options.publicUrl;
  const vault = (options.vault ?? NO_VAULT) as Vault;
  const definitionOf = (name: string): CredentialDefinition => {
    const definition = vault.definition(name);
    if (definition === undefined) throw new NotFound(`no credential "${name}" is declared`);
    return definition;
  };
  const refused = (err: unknown): never => {
    if (err instanceof LinkRefused) throw new Forbidden(err.message);
    throw err;
  };
  const redirectUri = (name: string) => `${publicUrl}/connections/${encodeURIComponent(name)}/callback`;

  // Only this plugin's routes take a form (the secret's page posts one).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  connectLinkRoutes(app, { vault, publicUrl, definitionOf });

  app.get<{ Params: { name: string }; Querystring: Record<string, string> }>(
    '/connections/:name/callback',
    {
      schema: {
        summary: "The provider's redirect after the person consented: stores the grant for the user of the link",
        operationId: 'finishConnection',
        tags: ['credentials'],
        params: nameParams,
        querystring: {
          type: 'object',
          properties: { state: { type: 'string' }, code: { type: 'string' }, error: { type: 'string' } },
          required: ['state'],
          additionalProperties: { type: 'string' },
        },
        response: { 200: { type: 'string', description: 'a page saying the account is connected (text/html)' }, ...problemResponses(400, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const definition = definitionOf(name);
      if (definition.kind !== 'oauth2') throw new NotFound(`credential "${name}" is not an OAuth connection`);
      const state = request.query.state!;
      if (cookieOf(request, STATE_COOKIE) !== state)
        throw new Forbidden('this sign-in was started in another browser (or was changed): start again from the link');
      const bound = await vault.takeState(name, state).catch(refused);
      reply.header('set-cookie', `${STATE_COOKIE}=; Path=/connections/${encodeURIComponent(name)}/; Max-Age=0; HttpOnly; SameSite=Lax`);
      if (typeof request.query.error === 'string') throw new Forbidden(`the provider did not grant access: ${request.query.error}`);
      try {
        const grant = await exchangeCode(definition as OAuth2Definition, new URLSearchParams(request.query), state, redirectUri(name), bound.verifier!);
        await vault.storeGrant(bound.owner, name, grant);
      } catch (err) {
        if (err instanceof ProviderError) throw new Forbidden(`the account was not connected: ${err.message}`);
        throw err;
      }
      return page(reply, `${name} is connected`, '<p>You can close this window and go back to the conversation: the same request works now.</p>');
    },
  );

  app.post<{ Params: { name: string }; Body: { state: string; value: string } }>(
    '/connections/:name/callback',
    {
      schema: {
        summary: "The secret's form: stores the value for the user of the link",
        operationId: 'submitSecret',
        tags: ['credentials'],
        params: nameParams,
        body: {
          type: 'object',
          properties: { state: { type: 'string' }, value: { type: 'string', minLength: 1, maxLength: MAX_SECRET_CHARS } },
          required: ['state', 'value'],
        },
        response: { 200: { type: 'string', description: 'a page saying the key is stored (text/html)' }, ...problemResponses(400, 403, 404, 503) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      if (definitionOf(name).kind !== 'secret') throw new NotFound(`credential "${name}" is not a secret`);
      const bound = await vault.takeState(name, request.body.state).catch(refused);
      await vault.putSecret(bound.owner, name, request.body.value);
      return page(reply, `${name} is saved`, '<p>You can close this window and go back to the conversation: the same request works now.</p>');
    },
  );

  myConnectionRoutes(app, vault, definitionOf);

  putCredentialRoute(app, vault, definitionOf);
}

/** `PUT /me/credentials/{name}`: the caller stores the value of a secret without a link. */
function putCredentialRoute(app: FastifyInstance, vault: Vault, definitionOf: (name: string) => CredentialDefinition): void {
  app.put<{ Params: { name: string }; Body: { value: string } }>(
    '/me/credentials/:name',
    {
      schema: {
        summary: "Stores the caller's value of a secret credential",
        operationId: 'putCredential',
        tags: ['credentials'],
        params: nameParams,
        body: {
          type: 'object',
          additionalProperties: false,
          properties: { value: { type: 'string', minLength: 1, maxLength: MAX_SECRET_CHARS } },
          required: ['value'],
        },
        response: { 204: { type: 'null', description: 'stored' }, ...problemResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const definition = definitionOf(name);
      if (definition.kind !== 'secret') throw new InvalidBody(`credential "${name}" is an OAuth connection: connect it through the link a call answers with`);
      await vault.putSecret(ownerOf(request), name, request.body.value);
      return reply.code(204).send();
    },
  );
}

/** The caller's own connections: list, forget, and a connect link on demand (names, scopes, expiry; never a secret). */
function myConnectionRoutes(app: FastifyInstance, vault: Vault, definitionOf: (name: string) => CredentialDefinition): void {
  app.get(
    '/me/connections',
    {
      schema: {
        summary: "The caller's connected credentials: names, scopes, expiry (never a secret)",
        operationId: 'listConnections',
        tags: ['credentials'],
        response: {
          200: {
            type: 'object',
            properties: {
              connections: { type: 'array', items: connectionSchema },
              available: {
                type: 'array',
                items: {
                  type: 'object',
                  properties: { name: { type: 'string' }, type: { type: 'string', enum: ['oauth2', 'secret'] } },
                  required: ['name', 'type'],
                },
                description: 'every credential the service declares',
              },
            },
            required: ['connections', 'available'],
          },
          ...problemResponses(401, 429, 503),
        },
      },
    },
    async (request) => ({
      connections: await vault.connections(ownerOf(request)),
      available: [...vault.definitions.values()].map((d) => ({ name: d.name, type: d.kind })),
    }),
  );

  app.delete<{ Params: { name: string } }>(
    '/me/connections/:name',
    {
      schema: {
        summary: "Forgets one of the caller's credentials",
        operationId: 'forgetConnection',
        tags: ['credentials'],
        params: nameParams,
        response: { 204: { type: 'null', description: 'forgotten' }, ...problemResponses(400, 401, 404, 429, 503) },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      if (!(await vault.forget(ownerOf(request), name))) throw new NotFound(`no connection "${name}" for this caller`);
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { name: string } }>(
    '/me/connections/:name/link',
    {
      schema: {
        summary: 'A connect link for the caller: where the person connects this account (oauth2) or enters its value (secret)',
        description: `The same single-use link an authorization_required result carries: it works once, for ${LINK_TTL_MS / 60_000} minutes, for this caller only.`,
        operationId: 'createConnectLink',
        tags: ['credentials'],
        params: nameParams,
        response: {
          200: {
            type: 'object',
            properties: { credential: { type: 'string' }, url: { type: 'string' }, expires_at: { type: 'string', format: 'date-time' } },
            required: ['credential', 'url', 'expires_at'],
          },
          ...problemResponses(400, 401, 404, 429, 503),
        },
      },
    },
    async (request) => {
      const { name } = request.params;
      definitionOf(name);
      const url = await vault.connectLink(
        ownerOf(request),
        name,
        displayName({ principal: request.caller?.principal ?? null, user: request.caller?.user ?? null }),
      );
      return { credential: name, url, expires_at: new Date(Date.now() + LINK_TTL_MS).toISOString() };
    },
  );
}
