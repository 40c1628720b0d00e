/**
 * The credentials stage (after policy, before the ledger): the credentials the tool declares are
 * read for the calling user before the call runs; one that is missing (or whose refresh failed)
 * answers `authorization_required` with a fresh connect link, and nothing runs. The handler
 * reads them through `context.credentials.get(name)`, which asks the vault for any other one.
 */
import type { Logger } from 'pino';
import { AuthorizationRequired, ToolFailure } from '../tools/failure.ts';
import { authorizationRequired, type InvocationResult } from '../tools/outcome.ts';
import type { CallerIdentity, Next, PipelineCall, Stage } from '../tools/pipeline/index.ts';
import type { Credentials } from '../tools/types.ts';
import type { Principal, UserIdentity } from '../callers/principal.ts';
import type { Vault } from './vault.ts';

/** Whose credentials a call uses: who calls (a user, or an API key), or everyone's when the service is open. */
export function credentialOwner(caller: Pick<CallerIdentity, 'principal' | 'id'>): string {
  return caller.principal?.id ?? caller.id ?? 'anonymous';
}

/** How a connect link's page names the person: the token's name, username or email, else the user or key id. */
export function displayName(caller: { principal: Pick<Principal, 'id' | 'user'> | null; user: UserIdentity | null }): string | null {
  const claims = caller.user?.claims ?? {};
  for (const claim of ['name', 'preferred_username', 'email']) {
    const value = claims[claim];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().slice(0, 200);
  }
  return caller.principal?.user ?? caller.principal?.id ?? null;
}

class CallCredentials implements Credentials {
  readonly #gate: CredentialsStage;
  readonly #tool: string;
  readonly #owner: string;
  readonly #log: Logger;
  readonly #ready: Map<string, string>;
  readonly #display: string | null;

  constructor(gate: CredentialsStage, tool: string, owner: string, log: Logger, ready: Map<string, string>, display: string | null) {
    this.#gate = gate;
    this.#tool = tool;
    this.#owner = owner;
    this.#log = log;
    this.#ready = ready;
    this.#display = display;
  }

  async get(name: string): Promise<string> {
    const ready = this.#ready.get(name);
    if (ready !== undefined) return ready;
    const value = await this.#gate.read(this.#tool, this.#owner, name, this.#log, this.#display);
    this.#ready.set(name, value);
    return value;
  }
}

export class CredentialsStage implements Stage {
  readonly name = 'credentials';
  readonly #vault: Vault;

  constructor(vault: Vault) {
    this.#vault = vault;
  }

  async run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    const { tool, scope } = call;
    const owner = credentialOwner(scope.caller);
    const ready = new Map<string, string>();
    const display = displayName(scope.caller);
    try {
      for (const name of tool.credentials) ready.set(name, await this.read(tool.name, owner, name, scope.sinks.log, display));
    } catch (err) {
      if (err instanceof AuthorizationRequired) return authorizationRequired(call.identity, err);
      throw err;
    }
    call.credentials = new CallCredentials(this, tool.name, owner, scope.sinks.log, ready, display);
    call.heldCredentials = ready; // and what `get` adds to it: the redaction stage keeps them out of the result
    return next();
  }

  /** The owner's credential, or AuthorizationRequired with a new link. */
  async read(toolName: string, owner: string, name: string, log: Logger, display: string | null = null): Promise<string> {
    const definition = this.#vault.definition(name);
    if (definition === undefined) {
      throw new ToolFailure(
        'handler_error',
        `Tool "${toolName}" asked for the credential "${name}", which this service does not declare.`,
        `credential "${name}" is not declared`,
      );
    }
    const value = await this.#vault.secret(owner, name);
    if (value !== null) return value;
    const url = await this.#vault.connectLink(owner, name, display);
    log.info({ credential: name, tool: toolName }, 'credential missing: connect link issued');
    const what = definition.kind === 'oauth2' ? 'account' : 'key';
    throw new AuthorizationRequired(
      { credential: name, url },
      `Tool "${toolName}" needs the user's "${name}" ${what}, which is not connected (or its access has lapsed). Ask the user to open this link (valid for 10 minutes, once) and connect it, then call the tool again: ${url}`,
      `credential "${name}" is not connected for this user`,
    );
  }
}
