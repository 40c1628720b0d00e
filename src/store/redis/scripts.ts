/**
 * The one way Lua scripts are loaded: `lua/<name>.lua` beside the classes that run them, read once per
 * process, each line `--- @include "<name>"` replaced by `lua/includes/<name>.lua` (BullMQ's layout),
 * and registered on a connection with defineCommand. Every script opens with a comment saying what it
 * guarantees.
 */
import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/** A connection to a single Redis or to a Redis Cluster. */
export type RedisClient = Redis | Cluster;

const INCLUDE = /^--- @include "([\w-]+)"$/gm;
const loaded = new Map<string, string>();

function read(path: string): string {
  return readFileSync(new URL(`./lua/${path}.lua`, import.meta.url), 'utf8');
}

/** The text of lua/<file>.lua with its includes in place. */
export function luaScript(file: string): string {
  let text = loaded.get(file);
  if (text === undefined) {
    text = read(file).replace(INCLUDE, (_, include: string) => read(`includes/${include}`).trimEnd());
    loaded.set(file, text);
  }
  return text;
}

/** The scripts registered on each connection, so a second connection can be given the same. */
const defined = new WeakMap<RedisClient, Record<string, ScriptSpec>>();

/** Registers on `to` every script registered on `from` so far. */
export function copyScripts(from: RedisClient, to: RedisClient): void {
  defineScripts(to, defined.get(from) ?? {});
}

/**
 * A command's script: its number of keys (null: the caller passes the count first, for scripts that
 * take any number of keys), and the file when it is not the command's own name.
 */
export type ScriptSpec = number | null | { readonly keys: number; readonly file: string };

/** Registers each command on the connection; a command named `x` runs lua/x.lua unless its spec names another file. */
export function defineScripts(client: RedisClient, scripts: Readonly<Record<string, ScriptSpec>>): void {
  const kept = defined.get(client) ?? {};
  defined.set(client, Object.assign(kept, scripts));
  for (const [name, spec] of Object.entries(scripts)) {
    if (spec === null) client.defineCommand(name, { lua: luaScript(name) });
    else if (typeof spec === 'number') client.defineCommand(name, { numberOfKeys: spec, lua: luaScript(name) });
    else client.defineCommand(name, { numberOfKeys: spec.keys, lua: luaScript(spec.file) });
  }
}
