/** Reading environment variables: a bad value stops the start with one line naming the variable. */
import { readFileSync } from 'node:fs';
import { ConfigError } from './errors.ts';

export type Env = Readonly<Record<string, string | undefined>>;

/** The trimmed value; undefined when unset or blank. */
export function text(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

/**
 * A secret variable: its value, or the contents of the file `<name>_FILE` names (as Docker secrets are
 * mounted), trailing newline dropped. Both set, or a file that cannot be read, stops the start.
 */
export function secretText(env: Env, name: string): string | undefined {
  const value = text(env, name);
  const file = text(env, `${name}_FILE`);
  if (file === undefined) return value;
  if (value !== undefined) throw new ConfigError(`${name} and ${name}_FILE are exclusive: set one of them`);
  let contents: string;
  try {
    contents = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(`${name}_FILE "${file}" cannot be read: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const secret = contents.replace(/\r?\n$/, '');
  if (secret.trim() === '') throw new ConfigError(`${name}_FILE "${file}" is empty`);
  return secret;
}

export function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return Number(raw);
}

export function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}
