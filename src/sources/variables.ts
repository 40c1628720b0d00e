/**
 * `${VAR}` in TOOLS_FILE: replaced from the environment at start, in every string value of the
 * parsed file (never in keys, and never as text before parsing, so a value cannot add structure).
 * `$${VAR}` stands for a literal `${VAR}`. A variable that is not set stops the start, named —
 * its value is never printed. `<VAR>_FILE` stands in for a secret variable (Docker secrets).
 * `${credential.<name>}` is left as it is: the calling user's credential fills it at each call.
 */
import { secretText } from '../config.ts';
import { isObject } from '../json.ts';
import { ConfigError, ToolsFileError } from '../errors.ts';

const VARIABLE = /\$(\$?)\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

type Env = Readonly<Record<string, string | undefined>>;

/** A `${VAR}` the file used, as the redaction of results knows it (docs/operations.md#secrets-never-reach-the-model). */
export interface UsedVariable {
  readonly name: string;
  readonly value: string;
}

/** Fields whose whole value is an address or a command, not a secret: a variable that is all of one is not redacted. */
const ADDRESS_FIELDS = new Set([
  'url',
  'base_url',
  'spec',
  'command',
  'cwd',
  'prefix',
  'source',
  'description',
  'name',
  'issuer',
  'authorize_url',
  'token_url',
]);

function expandString(text: string, env: Env, fail: (problem: string) => never, path: string, used?: UsedVariable[]): string {
  return text.replace(VARIABLE, (whole, escaped: string, name: string) => {
    if (escaped === '$') return whole.slice(1);
    if (name.startsWith('credential.')) return whole;
    if (!VARIABLE_NAME.test(name)) fail(`"\${${name}}" is not a variable name (letters, digits and _)`);
    let value: string | undefined;
    try {
      value = env[name] ?? secretText(env, name);
    } catch (err) {
      return fail(err instanceof ConfigError ? err.message : String(err));
    }
    if (value === undefined) fail(`environment variable ${name} is not set`);
    if (used !== undefined && !(whole === text && ADDRESS_FIELDS.has(path.slice(path.lastIndexOf('.') + 1)))) used.push({ name, value });
    return value;
  });
}

/**
 * A copy of `value` with every `${VAR}` replaced; `fail(path, problem)` names where a variable is
 * missing; `used` collects the variables that may be secrets.
 */
export function expandVariables(value: unknown, env: Env, fail: (path: string, problem: string) => never, path = '', used?: UsedVariable[]): unknown {
  if (typeof value === 'string') return expandString(value, env, (problem) => fail(path, problem), path, used);
  if (Array.isArray(value)) return value.map((item, i) => expandVariables(item, env, fail, `${path}[${i}]`, used));
  if (isObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = expandVariables(item, env, fail, path === '' ? key : `${path}.${key}`, used);
    return copy;
  }
  return value;
}

/** Throws the one line for a missing variable. */
export function variableFailure(file: string) {
  return (path: string, problem: string): never => {
    throw new ToolsFileError(`TOOLS_FILE ${file}: ${path}: ${problem}`);
  };
}
