/**
 * The redaction stage (docs/operations.md#secrets-never-reach-the-model): after credentials, it
 * hands the call one `Redaction` that the handler stage runs over whatever the handler answered or
 * threw — before it is logged, kept, rendered, recorded in the ledger and the session, traced or fed
 * to the console. What it replaces: the secrets the service knows (the tools file's `${VAR}`s,
 * configured secrets), the credentials this call was handed, and the bearer the request presented.
 * It is in the pipeline only when there is something to redact.
 */
import type { InvocationResult } from '../tools/outcome.ts';
import type { Next, PipelineCall, Redaction, Stage } from '../tools/pipeline/index.ts';
import { SecretMatcher, type KnownSecret } from './matcher.ts';

/** The service's own secrets, in named groups; the one matcher over all of them is rebuilt when a group changes. */
export class KnownSecrets {
  readonly #groups = new Map<string, readonly KnownSecret[]>();
  #matcher = SecretMatcher.EMPTY;

  get matcher(): SecretMatcher {
    return this.#matcher;
  }

  /** Replaces a group's secrets (the tools file's variables, the configuration's) and rebuilds the matcher. */
  set(group: string, secrets: readonly KnownSecret[]): void {
    this.#groups.set(group, secrets);
    this.#matcher = new SecretMatcher([...this.#groups.values()].flat());
  }
}

/** One call's redaction: the service's matcher, then one over what only this call holds (built when first needed). */
class CallRedaction implements Redaction {
  readonly #service: SecretMatcher;
  readonly #call: PipelineCall;
  #own: SecretMatcher | null = null;
  /** How many of the call's own secrets #own was built from: a handler may ask for more credentials as it runs. */
  #ownCount = 0;

  constructor(service: SecretMatcher, call: PipelineCall) {
    this.#service = service;
    this.#call = call;
  }

  text(text: string): string {
    const own = this.#ownMatcher();
    const redacted = this.#service.redact(text);
    return own === null ? redacted : own.redact(redacted);
  }

  value<T>(value: T): T {
    const own = this.#ownMatcher();
    const redacted = this.#service.redactValue(value);
    return own === null ? redacted : own.redactValue(redacted);
  }

  #ownMatcher(): SecretMatcher | null {
    const held = this.#call.heldCredentials;
    const presented = this.#call.scope.caller.presented;
    const count = (held?.size ?? 0) + (presented === null ? 0 : 1);
    if (count === 0) return null;
    if (count !== this.#ownCount) {
      const secrets: KnownSecret[] = presented === null ? [] : [presented];
      for (const [name, value] of held ?? []) secrets.push({ name, value });
      this.#own = new SecretMatcher(secrets);
      this.#ownCount = count;
    }
    return this.#own;
  }
}

export class RedactionStage implements Stage {
  readonly name = 'redaction';
  readonly #known: KnownSecrets;

  constructor(known: KnownSecrets) {
    this.#known = known;
  }

  run(call: PipelineCall, next: Next): Promise<InvocationResult> {
    call.redaction = new CallRedaction(this.#known.matcher, call);
    return next();
  }
}
