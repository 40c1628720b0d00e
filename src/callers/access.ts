/**
 * Access rules for verified users (the keys file's `access:` list): `{groups?, scopes?, tools: [glob…],
 * admin?, rate_per_min?}`. A user gets the union of every rule that matches their groups (a rule naming
 * no groups matches everyone); a rule's `scopes` gate its tools: without them the user sees the tools
 * but calling one answers insufficient_scope naming the scope, so an OAuth client can step up.
 */
import picomatch from 'picomatch';
import type { Caller, Principal } from './principal.ts';

export interface AccessRule {
  groups?: string[];
  scopes?: string[];
  tools: string[];
  admin?: boolean;
  rate_per_min?: number;
}

export const accessRuleSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['tools'],
  properties: {
    groups: { type: 'array', items: { type: 'string', minLength: 1 } },
    scopes: { type: 'array', items: { type: 'string', pattern: '^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$' } },
    tools: { type: 'array', items: { type: 'string', minLength: 1 } },
    admin: { type: 'boolean' },
    rate_per_min: { type: 'integer', minimum: 1 },
  },
} as const;

interface CompiledRule {
  groups: readonly string[] | null;
  scopes: readonly string[];
  matches: (tool: string) => boolean;
  admin: boolean;
  ratePerMin: number | null;
}

/** A verified token as access rules see it: the subject, its groups and scopes, and every claim for handlers. */
export interface VerifiedUser {
  sub: string;
  groups: readonly string[];
  scopes: readonly string[];
  claims: Readonly<Record<string, unknown>>;
}

/** A claim's strings: a space-separated string (RFC 9068's `scope`) or a list. */
export function stringsOf(value: unknown): string[] {
  if (typeof value === 'string') return value.split(' ').filter((s) => s !== '');
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

/** A token's scopes: RFC 9068's `scope`, or Entra ID's `scp`. */
export function scopesOf(claims: Readonly<Record<string, unknown>>): string[] {
  return stringsOf(claims.scope ?? claims.scp);
}

export class AccessRules {
  readonly #rules: readonly CompiledRule[] | null;

  /** `null`: no rules written (a keys file without `access:`, or none at all): every verified user may call every tool. */
  constructor(rules: readonly AccessRule[] | null) {
    this.#rules =
      rules === null
        ? null
        : rules.map((rule) => {
            const globs = rule.tools.map((glob) => picomatch(glob));
            return {
              groups: rule.groups ?? null,
              scopes: rule.scopes ?? [],
              matches: (tool: string) => globs.some((match) => match(tool)),
              admin: rule.admin === true,
              ratePerMin: rule.rate_per_min ?? null,
            };
          });
  }

  /** The caller a verified user is: what the matching rules grant them. */
  callerFor(user: VerifiedUser): Caller {
    const principal: Principal = Object.freeze({
      id: `user:${user.sub}`,
      user: user.sub,
      groups: Object.freeze([...user.groups]),
      scopes: Object.freeze([...user.scopes]),
      admin: false,
    });
    const identity = Object.freeze({ id: user.sub, groups: principal.groups, claims: user.claims });
    // What the user sees depends on their groups only: callers of the same groups share tool lists.
    const catalogKey = `groups:${[...user.groups].sort().join('\n')}`;
    if (this.#rules === null) {
      return Object.freeze({
        id: principal.id,
        catalogKey,
        admin: false,
        ratePerMin: null,
        principal,
        user: identity,
        allows: () => true,
        missingScope: () => null,
        mayCall: () => true,
      });
    }
    const inGroups = this.#rules.filter((rule) => rule.groups === null || rule.groups.some((g) => user.groups.includes(g)));
    const granted = inGroups.filter((rule) => rule.scopes.every((s) => user.scopes.includes(s)));
    const gated = inGroups.filter((rule) => !granted.includes(rule));
    const admin = granted.some((rule) => rule.admin);
    // The most generous limit of the granting rules; none when no rule sets one.
    const rates = granted.map((rule) => rule.ratePerMin).filter((rate): rate is number => rate !== null);
    return Object.freeze({
      id: principal.id,
      catalogKey,
      admin,
      ratePerMin: rates.length === 0 ? null : Math.max(...rates),
      principal: admin ? Object.freeze({ ...principal, admin }) : principal,
      user: identity,
      allows: (tool: string) => inGroups.some((rule) => rule.matches(tool)),
      missingScope: (tool: string) => {
        if (granted.some((rule) => rule.matches(tool))) return null;
        const rule = gated.find((r) => r.matches(tool));
        // Every scope the rule still needs, in one challenge (MCP authorization: no incremental step-ups).
        return rule === undefined ? null : rule.scopes.filter((s) => !user.scopes.includes(s)).join(' ');
      },
      mayCall: (tool: string) => granted.some((rule) => rule.matches(tool)),
    });
  }

  /** Every scope a rule names: the protected resource metadata's `scopes_supported`. */
  scopes(): string[] {
    return [...new Set((this.#rules ?? []).flatMap((rule) => rule.scopes))];
  }
}
