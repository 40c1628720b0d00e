/**
 * A real OAuth 2 / OpenID Connect provider for the tests (oidc-provider) on a free port: one
 * confidential client, authorization code + PKCE, refresh tokens, a short access-token lifetime.
 * Its interaction page signs in the account the test's browser names (header x-test-account) and
 * grants at once. Every token it issues is recorded, so tests can look for them where they must
 * not be; the token endpoint can be made to fail.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider from 'oidc-provider';
import { startNodeServer, type NodeServer } from './upstreams.ts';

export interface TestProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Every access and refresh token issued. */
  issued: Set<string>;
  /** How many refresh_token grants succeeded. */
  refreshes: number;
  /** While true, the token endpoint answers 500. */
  failTokenEndpoint: boolean;
  /** The account an access token belongs to (the userinfo endpoint), or null when it is not valid. */
  subjectOf(token: string): Promise<string | null>;
  stop(): Promise<void>;
}

export async function startTestProvider(options: { redirectUris: string[]; accessTokenTtlS?: number }): Promise<TestProvider> {
  let handle: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  const server: NodeServer = await startNodeServer((req, res) => handle(req, res));
  const clientId = 'toolport-test';
  const clientSecret = `secret-${Math.random().toString(36).slice(2)}`;
  const provider = new Provider(server.url, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    scopes: ['openid', 'offline_access'],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    ttl: {
      AccessToken: options.accessTokenTtlS ?? 3600,
      Grant: 3600,
      Interaction: 600,
      Session: 3600,
      AuthorizationCode: 60,
      RefreshToken: 3600,
      IdToken: 3600,
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, id: string) => ({ accountId: id, claims: () => ({ sub: id }) }),
    cookies: { keys: ['test-cookie-key'] },
    // A refresh token for every grant (by default only with offline_access and prompt=consent).
    issueRefreshToken: async () => true,
  });
  const state: TestProvider = {
    issuer: server.url,
    clientId,
    clientSecret,
    issued: new Set(),
    refreshes: 0,
    failTokenEndpoint: false,
    async subjectOf(token) {
      const response = await fetch(`${server.url}/me`, { headers: { authorization: `Bearer ${token}` } });
      if (response.status !== 200) return null;
      return ((await response.json()) as { sub: string }).sub;
    },
    stop: () => server.stop(),
  };
  provider.on('grant.success', (ctx) => {
    const body = ctx.body as { access_token?: string; refresh_token?: string };
    if (body.access_token) state.issued.add(body.access_token);
    if (body.refresh_token) state.issued.add(body.refresh_token);
    if (ctx.oidc.params?.grant_type === 'refresh_token') state.refreshes += 1;
  });
  const callback = provider.callback();
  handle = (req, res) => {
    if (req.url?.startsWith('/token') && state.failTokenEndpoint) {
      res.statusCode = 500;
      res.end('{"error":"server_error"}');
      return;
    }
    if (req.url?.startsWith('/interaction/')) {
      void (async () => {
        const details = await provider.interactionDetails(req, res);
        const accountId = String(req.headers['x-test-account'] ?? 'nobody');
        const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) });
        grant.addOIDCScope(String(details.params.scope ?? 'openid'));
        const grantId = await grant.save();
        await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
      })().catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
      return;
    }
    callback(req, res);
  };
  return state;
}

/**
 * A browser: follows redirects across toolport (through `toolport`) and the provider, keeping
 * cookies per host, as `account` when the provider asks who signs in.
 */
export class TestBrowser {
  readonly #cookies = new Map<string, Map<string, string>>();
  constructor(
    readonly account: string,
    readonly toolport: {
      origin: string;
      get(
        path: string,
        headers: Record<string, string>,
      ): Promise<{ status: number; headers: Record<string, string | string[] | number | undefined>; body: string }>;
      /** A form POST (`body` urlencoded). */
      post(
        path: string,
        headers: Record<string, string>,
        body: string,
      ): Promise<{ status: number; headers: Record<string, string | string[] | number | undefined>; body: string }>;
    },
  ) {}

  #remember(host: string, setCookie: string | string[] | undefined): void {
    const jar = this.#cookies.get(host) ?? new Map<string, string>();
    this.#cookies.set(host, jar);
    for (const line of Array.isArray(setCookie) ? setCookie : setCookie === undefined ? [] : [setCookie]) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      jar.set(pair!.slice(0, eq).trim(), pair!.slice(eq + 1).trim());
    }
  }

  #cookieHeader(host: string): string {
    return [...(this.#cookies.get(host) ?? new Map<string, string>()).entries()]
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}=${v}`)
      .join('; ');
  }

  /** One GET, without following; cookies kept. */
  async step(url: string, extra: Record<string, string> = {}): Promise<{ status: number; location: string | null; body: string }> {
    const target = new URL(url);
    const headers: Record<string, string> = { 'x-test-account': this.account, ...extra };
    const cookie = this.#cookieHeader(target.host);
    if (cookie !== '') headers.cookie = cookie;
    if (target.origin === this.toolport.origin) {
      const answer = await this.toolport.get(`${target.pathname}${target.search}`, headers);
      const setCookie = answer.headers['set-cookie'];
      this.#remember(target.host, typeof setCookie === 'number' ? undefined : setCookie);
      const location = answer.headers.location;
      return { status: answer.status, location: typeof location === 'string' ? new URL(location, url).href : null, body: answer.body };
    }
    const response = await fetch(url, { headers, redirect: 'manual' });
    this.#remember(target.host, response.headers.getSetCookie());
    const location = response.headers.get('location');
    return { status: response.status, location: location === null ? null : new URL(location, url).href, body: await response.text() };
  }

  /** Submits a form of toolport's (urlencoded POST, cookies kept), without following. */
  async submit(
    url: string,
    fields: Record<string, string>,
    extra: Record<string, string> = {},
  ): Promise<{ status: number; location: string | null; body: string }> {
    const target = new URL(url);
    if (target.origin !== this.toolport.origin) throw new Error(`the test browser posts forms to toolport only, not ${url}`);
    const headers: Record<string, string> = { 'x-test-account': this.account, 'content-type': 'application/x-www-form-urlencoded', ...extra };
    const cookie = this.#cookieHeader(target.host);
    if (cookie !== '') headers.cookie = cookie;
    const answer = await this.toolport.post(`${target.pathname}${target.search}`, headers, new URLSearchParams(fields).toString());
    const setCookie = answer.headers['set-cookie'];
    this.#remember(target.host, typeof setCookie === 'number' ? undefined : setCookie);
    const location = answer.headers.location;
    return { status: answer.status, location: typeof location === 'string' ? new URL(location, url).href : null, body: answer.body };
  }

  /**
   * Opens a connect link as a person does: its confirmation page, then Continue (the page's form,
   * POSTed), then follows redirects as `open` does. An answer that is not the page (or not a redirect) ends it.
   */
  async connect(link: string, extra: Record<string, string> = {}, stopAt?: string): Promise<{ status: number; url: string; body: string }> {
    const shown = await this.step(link, extra);
    if (shown.status !== 200) return { status: shown.status, url: link, body: shown.body };
    const form = formOf(shown.body);
    const pressed = await this.submit(new URL(form.action, link).href, form.fields, extra);
    if (pressed.location === null || pressed.status < 300 || pressed.status >= 400) return { status: pressed.status, url: form.action, body: pressed.body };
    return this.open(pressed.location, {}, stopAt);
  }

  /** GETs `url` and follows redirects until an answer that is not one; `stopAt` ends early at a URL that starts with it. */
  async open(url: string, extra: Record<string, string> = {}, stopAt?: string): Promise<{ status: number; url: string; body: string }> {
    let current = url;
    for (let hop = 0; hop < 20; hop++) {
      if (stopAt !== undefined && hop > 0 && current.startsWith(stopAt)) return { status: 0, url: current, body: '' };
      const answer = await this.step(current, hop === 0 ? extra : {});
      if (answer.location === null || answer.status < 300 || answer.status >= 400) return { status: answer.status, url: current, body: answer.body };
      current = answer.location;
    }
    throw new Error('too many redirects');
  }
}

const unescapeHtml = (text: string) => text.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');

/** The first form of a page: where it posts and its hidden fields. */
export function formOf(html: string): { action: string; fields: Record<string, string> } {
  const form = /<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/.exec(html);
  if (form === null) throw new Error(`no form in the page: ${html.slice(0, 300)}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[input[1]!] = unescapeHtml(input[2]!);
  return { action: unescapeHtml(form[1]!), fields };
}
