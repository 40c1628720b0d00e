/**
 * The calling user's credentials on a forwarded request (docs/credentials.md): `auth: {credential}` as
 * `Authorization: Bearer <token>`, and `${credential.<name>}` filled into header values. A value
 * that would break a header (a line break) ends the call instead of being sent.
 */
import { CREDENTIAL_REFERENCE } from '../../credentials/definitions.ts';
import { ToolFailure } from '../../tools/failure.ts';
import type { ToolContext } from '../../tools/types.ts';

export interface CredentialHeaders {
  /** Sent as `Authorization: Bearer …`; null: none. */
  readonly auth: string | null;
  /** Headers whose configured value holds `${credential.<name>}`: [lower-cased name, template]. */
  readonly templated: readonly (readonly [string, string])[];
}

export const NO_CREDENTIAL_HEADERS: CredentialHeaders = { auth: null, templated: [] };

/** Splits configured headers into fixed ones and the ones a credential fills. */
export function credentialHeaders(headers: Record<string, string>, auth: string | null): { fixed: Record<string, string>; use: CredentialHeaders } {
  const fixed: Record<string, string> = {};
  const templated: [string, string][] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value.includes('${credential.')) templated.push([name.toLowerCase(), value]);
    else fixed[name] = value;
  }
  return { fixed, use: auth === null && templated.length === 0 ? NO_CREDENTIAL_HEADERS : { auth, templated } };
}

function checked(toolName: string, name: string, value: string): string {
  if (/[\r\n\0]/.test(value))
    throw new ToolFailure(
      'handler_error',
      `Tool "${toolName}": the stored "${name}" credential cannot be sent in a header (it holds a line break). Ask the user to store it again.`,
      `credential "${name}" holds a line break`,
    );
  return value;
}

/** Adds the user's credentials to `headers` (in place). */
export async function addCredentialHeaders(headers: Record<string, string>, use: CredentialHeaders, context: ToolContext): Promise<void> {
  if (use.auth !== null) headers.authorization = `Bearer ${checked(context.toolName, use.auth, await context.credentials.get(use.auth))}`;
  for (const [name, template] of use.templated) {
    let filled = '';
    let last = 0;
    for (const match of template.matchAll(CREDENTIAL_REFERENCE)) {
      filled += template.slice(last, match.index) + checked(context.toolName, match[1]!, await context.credentials.get(match[1]!));
      last = match.index + match[0].length;
    }
    headers[name] = filled + template.slice(last);
  }
}
