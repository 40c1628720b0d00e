/**
 * API keys (docs/operations.md) from API_KEYS_FILE, JSON or YAML: a list of {id, key_sha256, tools: [glob…],
 * admin?, rate_per_min?, toolsets?}, or an object {keys: [that list], access: [rules for verified users]}.
 * A key bound to toolsets (docs/toolsets.md) calls only their members, and sees no other toolset.
 * The secret itself never reaches toolport's memory beyond one hash.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';
import { keyPrincipal, type Caller, type Principal, type UserIdentity } from './principal.ts';
import { AccessRules, accessRuleSchema, scopesOf, type AccessRule } from './access.ts';
import { ConfigError } from '../errors.ts';

export type { Caller, Principal, UserIdentity };

/** Whether a tool is a member of a toolset: told by the catalog once it is loaded. */
export type ToolsetMembership = (toolset: string, tool: string) => boolean;

interface KeyRecord {
  id: string;
  key_sha256: string;
  tools: string[];
  admin?: boolean;
  rate_per_min?: number;
  toolsets?: string[];
}

const keyListSchema = {
  type: 'array',
  items: {
    type: 'object',
    additionalProperties: false,
    required: ['id', 'key_sha256', 'tools'],
    properties: {
      id: { type: 'string', pattern: '^[A-Za-z0-9._:-]{1,64}$' },
      key_sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
      tools: { type: 'array', items: { type: 'string', minLength: 1 } },
      admin: { type: 'boolean' },
      rate_per_min: { type: 'integer', minimum: 1 },
      toolsets: { type: 'array', minItems: 1, items: { type: 'string', pattern: '^[a-z0-9_-]{1,64}$' } },
    },
  },
};
const ajv = new Ajv({ allErrors: true });
const validateKeys = ajv.compile<KeyRecord[]>({ ...keyListSchema, minItems: 1 });
const validateKeysFile = ajv.compile<{ keys: KeyRecord[]; access?: AccessRule[] }>({
  type: 'object',
  additionalProperties: false,
  required: ['keys'],
  properties: { keys: keyListSchema, access: { type: 'array', items: accessRuleSchema } },
});

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

interface StoredKey {
  caller: Caller;
  hash: Buffer;
}

export class ApiKeys {
  readonly #keys: StoredKey[];
  /** What verified users may do; with no `access:` written, every tool. */
  readonly access: AccessRules;
  /** Until toolsets are bound, a key bound to toolsets allows nothing. */
  #membership: ToolsetMembership = () => false;

  private constructor(keys: StoredKey[], access: AccessRules) {
    this.#keys = keys;
    this.access = access;
  }

  /** Reads and checks the file; every problem is a ConfigError naming API_KEYS_FILE. */
  static load(file: string): ApiKeys {
    let records: unknown;
    try {
      records = parseYaml(readFileSync(file, 'utf8')); // YAML is a superset of JSON: one parser for both
    } catch (err) {
      throw new ConfigError(`API_KEYS_FILE "${file}" cannot be read as JSON or YAML: ${(err as Error).message.split('\n')[0]}`);
    }
    return ApiKeys.from(records, `API_KEYS_FILE "${file}"`);
  }

  static from(content: unknown, source = 'API keys'): ApiKeys {
    let records: KeyRecord[];
    let access: AccessRule[] | null = null;
    if (Array.isArray(content)) {
      if (!validateKeys(content)) {
        const problems = (validateKeys.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
        throw new ConfigError(`${source} must be a list of {id, key_sha256, tools, admin?, rate_per_min?, toolsets?}: ${problems}`);
      }
      records = content;
    } else {
      if (!validateKeysFile(content)) {
        const problems = (validateKeysFile.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
        throw new ConfigError(`${source} must be a list of keys or {keys: [...], access: [{groups?, scopes?, tools, admin?, rate_per_min?}]}: ${problems}`);
      }
      records = content.keys;
      access = content.access ?? null;
    }
    const ids = new Set<string>();
    const hashes = new Set<string>();
    const keys: StoredKey[] = [];
    const found = new ApiKeys(keys, new AccessRules(access));
    for (const record of records) {
      const hash = record.key_sha256.toLowerCase();
      // "user:<sub>" names a verified user: a key of that id would own that user's records.
      if (record.id.startsWith('user:')) throw new ConfigError(`${source}: key id "${record.id}" must not start with "user:" (the ids of verified users)`);
      if (ids.has(record.id)) throw new ConfigError(`${source}: key id "${record.id}" appears twice`);
      if (hashes.has(hash)) throw new ConfigError(`${source}: key "${record.id}" has the same key_sha256 as another key`);
      ids.add(record.id);
      hashes.add(hash);
      const matchers = record.tools.map((glob) => picomatch(glob));
      const admin = record.admin === true;
      const toolsets = record.toolsets === undefined ? null : Object.freeze([...new Set(record.toolsets)]);
      const globbed = (name: string) => matchers.some((matches) => matches(name));
      const allows = toolsets === null ? globbed : (name: string) => globbed(name) && toolsets.some((t) => found.#membership(t, name));
      const caller: Caller = Object.freeze({
        id: record.id,
        catalogKey: `key:${record.id}`,
        admin,
        ratePerMin: record.rate_per_min ?? null,
        toolsets,
        principal: keyPrincipal(record.id, admin),
        user: null,
        allows,
        missingScope: () => null,
        mayCall: allows,
      });
      keys.push({ caller, hash: Buffer.from(hash, 'hex') });
    }
    return found;
  }

  /**
   * Binds the keys' toolsets to the catalog's: `known` names every toolset of the tools file
   * (a key naming another stops the start), `membership` answers which tools are in each.
   */
  bindToolsets(known: ReadonlySet<string>, membership: ToolsetMembership): void {
    for (const { caller } of this.#keys) {
      const unknown = caller.toolsets?.find((t) => !known.has(t));
      if (unknown !== undefined)
        throw new ConfigError(`API_KEYS_FILE: key "${caller.id}" is bound to toolset "${unknown}", which the tools file does not define`);
    }
    this.#membership = membership;
  }

  /** No keys file: no keys, and every verified user may call every tool. */
  static none(): ApiKeys {
    return new ApiKeys([], new AccessRules(null));
  }

  /**
   * The caller a bearer secret belongs to, or null. Every key's hash is compared, in constant time,
   * whichever matches, so the answer's timing tells nothing about the keys.
   */
  authenticate(secret: string): Caller | null {
    const presented = sha256(secret);
    let found: Caller | null = null;
    for (const key of this.#keys) if (timingSafeEqual(presented, key.hash)) found = key.caller;
    return found;
  }

  /** The caller of a call made earlier (a task, a handler's context): a key by its id, a user by what their token said. */
  callerOf(id: string, user: UserIdentity | null): Caller | undefined {
    if (user === null) return this.byId(id);
    return this.access.callerFor({ sub: user.id, groups: user.groups, scopes: scopesOf(user.claims), claims: user.claims });
  }

  byId(id: string): Caller | undefined {
    return this.#keys.find((k) => k.caller.id === id)?.caller;
  }
}
