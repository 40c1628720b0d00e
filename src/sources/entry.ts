/**
 * Reading one entry of TOOLS_FILE with one clear line per problem: every error names the file,
 * the entry (`http[2] "weather_now"`) and the field. Each source kind reads its entries with this.
 */
import { isObject } from '../json.ts';
import { ToolsFileError } from '../errors.ts';

export type JsonObject = Record<string, unknown>;

/** One entry of a section, after `${VAR}` expansion. */
export interface RawEntry {
  /** `<section>[<index>]`, e.g. `http[2]`. */
  readonly where: string;
  readonly value: unknown;
}

export class EntryReader {
  readonly #file: string;
  #where: string;
  readonly #value: JsonObject;
  readonly #allowed: Set<string>;

  /** `allowed`: every key the entry may have; any other key is refused (a typo must not be ignored). */
  constructor(file: string, entry: RawEntry, allowed: readonly string[]) {
    this.#file = file;
    this.#where = entry.where;
    this.#allowed = new Set(allowed);
    if (!isObject(entry.value)) this.fail('must be a mapping (an object)');
    this.#value = entry.value;
    const label = this.#value.name ?? this.#value.source;
    if (typeof label === 'string' && label !== '') this.named(label);
    const unknown = Object.keys(this.#value).filter((k) => !this.#allowed.has(k));
    if (unknown.length > 0) this.fail(`unknown key "${unknown[0]}" (allowed: ${allowed.join(', ')})`);
  }

  /** Adds the entry's own name to later messages: `http[2] "weather_now"`. */
  named(name: string): this {
    this.#where = `${this.#where.replace(/ ".*"$/, '')} "${name}"`;
    return this;
  }

  get where(): string {
    return this.#where;
  }

  get raw(): JsonObject {
    return this.#value;
  }

  has(key: string): boolean {
    return this.#value[key] !== undefined;
  }

  fail(problem: string): never {
    throw new ToolsFileError(`TOOLS_FILE ${this.#file}: ${this.#where}: ${problem}`);
  }

  string(key: string): string {
    const value = this.#value[key];
    if (typeof value !== 'string' || value === '') this.fail(`${key} must be a non-empty string`);
    return value;
  }

  optionalString(key: string): string | undefined {
    return this.has(key) ? this.string(key) : undefined;
  }

  object(key: string): JsonObject {
    const value = this.#value[key];
    if (!isObject(value)) this.fail(`${key} must be a mapping (an object)`);
    return value;
  }

  optionalObject(key: string): JsonObject | undefined {
    return this.has(key) ? this.object(key) : undefined;
  }

  stringList(key: string): string[] {
    const value = this.#value[key];
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string' && v !== '')) this.fail(`${key} must be a list of non-empty strings`);
    return value as string[];
  }

  /** A mapping of names to string values (HTTP headers, environment variables). */
  stringMap(key: string): Record<string, string> {
    if (!this.has(key)) return {};
    const value = this.object(key);
    for (const [name, v] of Object.entries(value)) {
      if (typeof v !== 'string') this.fail(`${key}.${name} must be a string`);
    }
    return value as Record<string, string>;
  }

  positiveInteger(key: string): number | undefined {
    if (!this.has(key)) return undefined;
    const value = this.#value[key];
    if (!Number.isInteger(value) || (value as number) < 1) this.fail(`${key} must be a positive whole number`);
    return value as number;
  }
}
