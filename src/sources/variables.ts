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

function expandString(text: string, env: Env, fail: (problem: string) => never): string {
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
    return value;
  });
}

/** A copy of `value` with every `${VAR}` replaced; `fail(path, problem)` names where a variable is missing. */
export function expandVariables(value: unknown, env: Env, fail: (path: string, problem: string) => never, path = ''): unknown {
  if (typeof value === 'string') return expandString(value, env, (problem) => fail(path, problem));
  if (Array.isArray(value)) return value.map((item, i) => expandVariables(item, env, fail, `${path}[${i}]`));
  if (isObject(value)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = expandVariables(item, env, fail, path === '' ? key : `${path}.${key}`);
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
