/**
 * Ledger keys (docs/ledger.md): `<scope>:<tool>:<part>`, where part is the SHA-256 of the canonical
 * JSON of the arguments (auto), of the `param_keys` (params), of the plugin's custom key, or the
 * caller's Idempotency-Key verbatim.
 */
import { ownedSessionId } from '../store/owned-sessions.ts';
import { hashJson, sha256Hex } from '../tools/hash.ts';
import type { NormalizedIdempotency, RegisteredTool } from '../tools/registry.ts';
import type { ToolContext } from '../tools/types.ts';
import { KeyFunctionError } from '../errors.ts';

/** Printable ASCII without spaces, as Stripe and the IETF draft use them; at most 255 characters. */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * `global`, `session:<X-Session-Id>` (within its owner's sessions: `session:<owner>/<id>` when
 * callers are known), `key:<API key id or user:<sub>>` or `user:<the same>`. An absent session or
 * caller is the empty name (`session:`, `key:`), which no real one can be, so those calls share one
 * partition rather than skip the ledger: a retry without the header still runs the effect once.
 */
export function scopeName(scope: NormalizedIdempotency['scope'], sessionId: string | null, caller: string | null): string {
  if (scope === 'global') return 'global';
  if (scope === 'session') return `session:${sessionId === null ? '' : ownedSessionId(caller, sessionId)}`;
  return `${scope}:${caller ?? ''}`;
}

/**
 * A program's inner calls (docs/code-mode.md): `run:<caller>/<session>` (caller encoded, as a
 * session's owner is), so only the same caller in the same session replays them.
 */
export function runScopeName(caller: string | null, sessionId: string | null): string {
  return `run:${encodeURIComponent(caller ?? '')}/${sessionId ?? ''}`;
}

/** The part after `<scope>:<tool>:`, from the arguments (or the custom key), when no header names it. */
export function derivedKeyPart(tool: RegisteredTool, params: Record<string, unknown>, context: ToolContext): string {
  const config = tool.idempotency!;
  if (config.strategy === 'params') {
    const picked: Record<string, unknown> = {};
    for (const name of config.param_keys ?? []) if (params[name] !== undefined) picked[name] = params[name];
    return hashJson(picked);
  }
  const keyFunction = tool.keyFunction;
  if (config.strategy === 'custom' && typeof keyFunction === 'function') {
    let custom: unknown;
    try {
      custom = keyFunction(params, context);
    } catch (err) {
      throw new KeyFunctionError(err instanceof Error ? err.message : 'it threw');
    }
    if (typeof custom !== 'string' || custom === '') throw new KeyFunctionError('it did not return a non-empty string');
    return sha256Hex(custom);
  }
  return hashJson(params);
}
