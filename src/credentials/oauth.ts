/**
 * The OAuth 2 side of a credential (oauth4webapi): the authorization request with PKCE (S256),
 * the code exchange at the callback, and the refresh. Only the connect routes and the refresh
 * reach a provider; a call never waits on one unless its token is about to expire.
 */
import * as oauth from 'oauth4webapi';
import type { OAuth2Definition } from './definitions.ts';
import { ProviderError } from '../errors.ts';

const TOKEN_TIMEOUT_MS = 10_000;

/** The provider's token answer, in the shape the vault keeps. */
export interface Grant {
  accessToken: string;
  refreshToken: string | null;
  /** Epoch ms; null when the provider does not say. */
  expiresAt: number | null;
  scopes: readonly string[];
}

function server(definition: OAuth2Definition, issuer?: string): oauth.AuthorizationServer {
  return {
    issuer: definition.issuer ?? issuer ?? new URL(definition.authorizeUrl).origin,
    authorization_endpoint: definition.authorizeUrl,
    token_endpoint: definition.tokenUrl,
  };
}

function client(definition: OAuth2Definition): [oauth.Client, oauth.ClientAuth] {
  return [{ client_id: definition.clientId }, definition.clientSecret === null ? oauth.None() : oauth.ClientSecretPost(definition.clientSecret)];
}

function requestOptions(definition: OAuth2Definition): oauth.TokenEndpointRequestOptions {
  return { [oauth.allowInsecureRequests]: new URL(definition.tokenUrl).protocol === 'http:', signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS) };
}

/** A new PKCE code verifier (kept with the state until the callback). */
export function newVerifier(): string {
  return oauth.generateRandomCodeVerifier();
}

/** The provider URL to send the person to: code flow, PKCE S256 from `verifier`, the state. */
export async function authorizationRequest(definition: OAuth2Definition, redirectUri: string, state: string, verifier: string): Promise<string> {
  const url = new URL(definition.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', definition.clientId);
  url.searchParams.set('redirect_uri', redirectUri);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (definition.scopes.length > 0) url.searchParams.set('scope', definition.scopes.join(' '));
  return url.href;
}

function grantOf(definition: OAuth2Definition, answer: oauth.TokenEndpointResponse, previousRefresh: string | null): Grant {
  return {
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token ?? previousRefresh,
    expiresAt: typeof answer.expires_in === 'number' ? Date.now() + answer.expires_in * 1000 : null,
    scopes: typeof answer.scope === 'string' ? answer.scope.split(' ').filter((s) => s !== '') : definition.scopes,
  };
}

function providerError(err: unknown): ProviderError {
  if (err instanceof oauth.ResponseBodyError)
    return new ProviderError(`the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`, err.error === 'invalid_grant');
  if (err instanceof oauth.AuthorizationResponseError)
    return new ProviderError(`the provider answered ${err.error}${err.error_description ? `: ${err.error_description}` : ''}`, false);
  return new ProviderError(`the provider could not be used: ${err instanceof Error ? err.message : String(err)}`, false);
}

/** The callback's query (`code`, `state`, `iss`…) exchanged for a grant, with the verifier of its request. */
export async function exchangeCode(
  definition: OAuth2Definition,
  callback: URLSearchParams,
  state: string,
  redirectUri: string,
  verifier: string,
): Promise<Grant> {
  try {
    const as = server(definition, callback.get('iss') ?? undefined);
    const [c, auth] = client(definition);
    const parameters = oauth.validateAuthResponse(as, c, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, c, auth, parameters, redirectUri, verifier, requestOptions(definition));
    return grantOf(definition, await oauth.processAuthorizationCodeResponse(as, c, response), null);
  } catch (err) {
    throw providerError(err);
  }
}

export async function refreshGrant(definition: OAuth2Definition, refreshToken: string): Promise<Grant> {
  try {
    const as = server(definition);
    const [c, auth] = client(definition);
    const response = await oauth.refreshTokenGrantRequest(as, c, auth, refreshToken, requestOptions(definition));
    return grantOf(definition, await oauth.processRefreshTokenResponse(as, c, response), refreshToken);
  } catch (err) {
    throw providerError(err);
  }
}
