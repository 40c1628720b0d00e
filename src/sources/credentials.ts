/**
 * `credentials:` in TOOLS_FILE (docs/credentials.md), checked: a mapping of names to `type: oauth2`
 * (authorize_url, token_url, client_id, client_secret?, scopes?) or `type: secret`; and `auth:`
 * / `${credential.<name>}` of http, openapi and mcp entries, which must name one of them.
 */
import { CREDENTIAL_NAME, referencedCredentials, type CredentialDefinition, type CredentialDefinitions } from '../credentials/definitions.ts';
import { isObject } from '../json.ts';
import { EntryReader, type JsonObject } from './entry.ts';
import { endpointOf } from './upstream/endpoint.ts';

const OAUTH2_KEYS = ['type', 'authorize_url', 'token_url', 'client_id', 'client_secret', 'scopes', 'issuer'];
const SECRET_KEYS = ['type'];

function readOne(file: string, name: string, value: unknown): CredentialDefinition {
  const where = `credentials.${name}`;
  const type = isObject(value) ? value.type : undefined;
  const reader = new EntryReader(file, { where, value }, type === 'oauth2' ? OAUTH2_KEYS : SECRET_KEYS);
  if (!CREDENTIAL_NAME.test(name)) reader.fail(`the name must match ${CREDENTIAL_NAME}`);
  if (type === 'secret') return { name, kind: 'secret' };
  if (type !== 'oauth2') reader.fail('type must be oauth2 or secret');
  for (const key of ['authorize_url', 'token_url']) endpointOf(reader, reader.string(key), key);
  return {
    name,
    kind: 'oauth2',
    authorizeUrl: reader.string('authorize_url'),
    tokenUrl: reader.string('token_url'),
    clientId: reader.string('client_id'),
    clientSecret: reader.optionalString('client_secret') ?? null,
    scopes: reader.has('scopes') ? reader.stringList('scopes') : [],
    issuer: reader.optionalString('issuer') ?? null,
  };
}

export function readCredentials(file: string, section: JsonObject | null): CredentialDefinitions {
  const definitions = new Map<string, CredentialDefinition>();
  for (const [name, value] of Object.entries(section ?? {})) definitions.set(name, readOne(file, name, value));
  return definitions;
}

/**
 * The credentials an entry uses: `auth: {credential}` (sent as `Authorization: Bearer …`) and
 * every `${credential.<name>}` in its headers; each must be declared.
 */
export function readCredentialUse(
  reader: EntryReader,
  headers: Record<string, string>,
  declared: CredentialDefinitions,
): { auth: string | null; uses: string[] } {
  let auth: string | null = null;
  if (reader.has('auth')) {
    const given = reader.object('auth');
    const keys = Object.keys(given);
    if (keys.length !== 1 || typeof given.credential !== 'string') reader.fail('auth must be {credential: <a name under credentials:>}');
    auth = given.credential;
    if (!declared.has(auth)) reader.fail(`auth.credential "${auth}" is not declared under credentials:`);
    if (Object.keys(headers).some((h) => h.toLowerCase() === 'authorization')) reader.fail('auth and an Authorization header are exclusive: keep one');
  }
  const uses = new Set<string>(auth === null ? [] : [auth]);
  for (const [header, value] of Object.entries(headers)) {
    for (const name of referencedCredentials(value)) {
      if (!declared.has(name)) reader.fail(`headers.${header} uses \${credential.${name}}, which is not declared under credentials:`);
      uses.add(name);
    }
  }
  return { auth, uses: [...uses] };
}
