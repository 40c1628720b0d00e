/**
 * API keys (SPEC §8) from API_KEYS_FILE, JSON or YAML: a list of {id, key_sha256, tools: [glob…],
 * admin?, rate_per_min?}. The secret itself never reaches toolport's memory beyond one hash.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import picomatch from 'picomatch';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config.ts';
import { keyPrincipal, type Principal } from './principal.ts';

/** Who is calling: the key's id and what it may do. */
export interface Caller {
  readonly id: string;
  readonly admin: boolean;
  readonly ratePerMin: number | null;
  /** Whether this caller may see and call the tool. */
  allows(toolName: string): boolean;
  /** The key as a principal (made once, when the keys are read). */
  readonly principal: Principal;
}

interface KeyRecord {
  id: string;
  key_sha256: string;
  tools: string[];
  admin?: boolean;
  rate_per_min?: number;
}

const keysSchema = {
  type: 'array',
  minItems: 1,
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
    },
  },
};
const validateKeys = new Ajv({ allErrors: true }).compile<KeyRecord[]>(keysSchema);

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

interface StoredKey {
  caller: Caller;
  hash: Buffer;
}

export class ApiKeys {
  readonly #keys: StoredKey[];

  private constructor(keys: StoredKey[]) {
    this.#keys = keys;
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

  static from(records: unknown, source = 'API keys'): ApiKeys {
    if (!validateKeys(records)) {
      const problems = (validateKeys.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      throw new ConfigError(`${source} must be a list of {id, key_sha256, tools, admin?, rate_per_min?}: ${problems}`);
    }
    const ids = new Set<string>();
    const hashes = new Set<string>();
    const keys = records.map((record) => {
      const hash = record.key_sha256.toLowerCase();
      if (ids.has(record.id)) throw new ConfigError(`${source}: key id "${record.id}" appears twice`);
      if (hashes.has(hash)) throw new ConfigError(`${source}: key "${record.id}" has the same key_sha256 as another key`);
      ids.add(record.id);
      hashes.add(hash);
      const matchers = record.tools.map((glob) => picomatch(glob));
      const caller: Caller = Object.freeze({
        id: record.id,
        admin: record.admin === true,
        ratePerMin: record.rate_per_min ?? null,
        allows: (name: string) => matchers.some((matches) => matches(name)),
        principal: keyPrincipal(record.id, record.admin === true),
      });
      return { caller, hash: Buffer.from(hash, 'hex') };
    });
    return new ApiKeys(keys);
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

  byId(id: string): Caller | undefined {
    return this.#keys.find((k) => k.caller.id === id)?.caller;
  }
}
