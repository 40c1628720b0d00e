/**
 * Opening a connect link. `GET /connections/{name}/start?link=` only shows what will be connected
 * and for whom, with a Continue button: link previews (chat unfurlers, mail scanners) fetch links
 * and must not spend them. The button POSTs the link back; only that POST takes it (once) and sends
 * the person to the provider (authorization code + PKCE, the state bound to this browser by a
 * cookie) or shows the secret's form.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CredentialDefinition } from '../credentials/definitions.ts';
import { CREDENTIAL_NAME } from '../credentials/definitions.ts';
import { authorizationRequest, newVerifier } from '../credentials/oauth.ts';
import { credentialOwner } from '../credentials/stage.ts';
import { LINK_TTL_MS, type Vault } from '../credentials/vault.ts';
import { LinkRefused } from '../errors.ts';
import { problemResponses } from '../schemas.ts';

export const STATE_COOKIE = 'toolport_connect';
const LINK_PATTERN = '^[A-Za-z0-9_-]{43}$';

export const nameParams = { type: 'object', properties: { name: { type: 'string', pattern: CREDENTIAL_NAME.source } }, required: ['name'] };

/** Whose credentials a request reads and writes: the same owner a call of this caller uses. */
export function ownerOf(request: FastifyRequest): string {
  return credentialOwner({ principal: request.caller?.principal ?? null, id: request.caller?.id ?? null });
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A small self-contained HTML page (no scripts, no outside assets; forms post only to this origin). */
export function page(reply: FastifyReply, title: string, body: string) {
  return reply
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
    .header('referrer-policy', 'no-referrer')
    .header('x-robots-tag', 'noindex')
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head><body style="font-family:sans-serif;max-width:36em;margin:3em auto"><h1>${escapeHtml(title)}</h1>${body}</body></html>`,
    );
}

const GONE =
  '<p>This link no longer works: it was used already, has expired (links last 10 minutes), or never existed.</p><p>Ask for the tool again to get a new link.</p>';

export interface ConnectLinkOptions {
  vault: Vault;
  publicUrl: string;
  definitionOf: (name: string) => CredentialDefinition;
}

export function connectLinkRoutes(app: FastifyInstance, { vault, publicUrl, definitionOf }: ConnectLinkOptions): void {
  const startUrl = (name: string) => `${publicUrl}/connections/${encodeURIComponent(name)}/start`;
  const visitorOf = (request: FastifyRequest) => (request.caller === null ? null : ownerOf(request));

  app.get<{ Params: { name: string }; Querystring: { link: string } }>(
    '/connections/:name/start',
    {
      schema: {
        summary: 'Shows what a connect link connects, with a Continue button; does not use the link',
        description: `The link comes from an authorization_required result; it works once, for ${LINK_TTL_MS / 60_000} minutes, for the user it was made for. Opening it (or a link preview fetching it) spends nothing: Continue posts it back.`,
        operationId: 'showConnection',
        tags: ['credentials'],
        params: nameParams,
        querystring: { type: 'object', properties: { link: { type: 'string', pattern: LINK_PATTERN } }, required: ['link'] },
        response: {
          200: { type: 'string', description: 'the confirmation page (text/html)' },
          403: { type: 'string', description: 'the link was made for another user or connection (text/html)' },
          410: { type: 'string', description: 'the link was used, has expired or never existed (text/html)' },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const definition = definitionOf(name);
      let bound;
      try {
        bound = await vault.peekLink(name, request.query.link, visitorOf(request));
      } catch (err) {
        if (!(err instanceof LinkRefused)) throw err;
        return page(reply.code(403), 'This link is not yours', `<p>${escapeHtml(err.message)}</p>`);
      }
      if (bound === null) return page(reply.code(410), 'This link has expired', GONE);
      const what = definition.kind === 'oauth2' ? `your ${name} account` : `your ${name} key`;
      const who = bound.display === undefined ? '' : ` for <strong>${escapeHtml(bound.display)}</strong>`;
      const next =
        definition.kind === 'oauth2'
          ? `You will be sent to ${escapeHtml(new URL(definition.authorizeUrl).host)} to sign in and allow access.`
          : 'You will be asked for the key.';
      return page(
        reply,
        `Connect ${name}`,
        `<p>Connect ${escapeHtml(what)}${who} to the tools of this service.</p><p>${next}</p><form method="post" action="${escapeHtml(startUrl(name))}"><input type="hidden" name="link" value="${escapeHtml(request.query.link)}"><button>Continue</button></form><p>This link works once and lasts 10 minutes. If you did not ask for it, close this page.</p>`,
      );
    },
  );

  app.post<{ Params: { name: string }; Body: { link: string } }>(
    '/connections/:name/start',
    {
      schema: {
        summary: 'Uses a connect link (Continue): redirects to the provider (oauth2) or shows a form (secret)',
        description: 'The link is spent here, once; a used or expired link answers 403.',
        operationId: 'startConnection',
        tags: ['credentials'],
        params: nameParams,
        body: { type: 'object', properties: { link: { type: 'string', pattern: LINK_PATTERN } }, required: ['link'] },
        response: {
          303: { type: 'null', description: 'to the provider' },
          200: { type: 'string', description: 'the form where the person enters the secret (text/html)' },
          403: { type: 'string', description: 'the link was used, has expired, never existed, or is for another user (text/html)' },
          ...problemResponses(400, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const { name } = request.params;
      const definition = definitionOf(name);
      let owner: string;
      try {
        owner = await vault.takeLink(name, request.body.link, visitorOf(request));
      } catch (err) {
        if (!(err instanceof LinkRefused)) throw err;
        return page(reply.code(403), 'This link does not work', `<p>${escapeHtml(err.message)}</p>`);
      }
      if (definition.kind === 'secret') {
        const state = await vault.newState(owner, name);
        return page(
          reply,
          `Enter your ${name} key`,
          `<form method="post" action="${escapeHtml(`${publicUrl}/connections/${encodeURIComponent(name)}/callback`)}"><input type="hidden" name="state" value="${state}"><p><input type="password" name="value" autocomplete="off" required style="width:100%"></p><button>Save</button></form><p>It is stored encrypted and used only for your calls.</p>`,
        );
      }
      // The verifier travels inside the (sealed, single-use) state; the cookie ties it to this browser.
      const verifier = newVerifier();
      const state = await vault.newState(owner, name, { verifier });
      const target = await authorizationRequest(definition, `${publicUrl}/connections/${encodeURIComponent(name)}/callback`, state, verifier);
      reply.header(
        'set-cookie',
        `${STATE_COOKIE}=${state}; Path=/connections/${encodeURIComponent(name)}/; Max-Age=${LINK_TTL_MS / 1000}; HttpOnly; SameSite=Lax${publicUrl.startsWith('https:') ? '; Secure' : ''}`,
      );
      return reply.header('cache-control', 'no-store').redirect(target, 303);
    },
  );
}
