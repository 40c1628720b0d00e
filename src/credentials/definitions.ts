/** What `credentials:` in TOOLS_FILE declares (docs/credentials.md): the upstream accounts tools need. */

/** A credential's name: in `${credential.<name>}`, in `auth: {credential}` and in the /connections paths. */
export const CREDENTIAL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export interface OAuth2Definition {
  readonly name: string;
  readonly kind: 'oauth2';
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  /** Null: a public client (PKCE alone). */
  readonly clientSecret: string | null;
  readonly scopes: readonly string[];
  /** The provider's issuer identifier, when given: the callback's `iss` must be it (RFC 9207). */
  readonly issuer: string | null;
}

export interface SecretDefinition {
  readonly name: string;
  readonly kind: 'secret';
}

export type CredentialDefinition = OAuth2Definition | SecretDefinition;

export type CredentialDefinitions = ReadonlyMap<string, CredentialDefinition>;

/** `${credential.<name>}` in a header value: filled with the caller's credential at each call. */
export const CREDENTIAL_REFERENCE = /\$\{credential\.([^}]*)\}/g;

/** The credentials a header value names. */
export function referencedCredentials(value: string): string[] {
  return [...value.matchAll(CREDENTIAL_REFERENCE)].map((m) => m[1]!);
}
