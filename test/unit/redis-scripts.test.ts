/** The Redis store's Lua scripts: one loader, and every script says what it guarantees. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { luaScript } from '../../src/store/redis/scripts.ts';

const LUA = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/store/redis/lua');
const scripts = readdirSync(LUA)
  .filter((file) => file.endsWith('.lua'))
  .map((file) => file.slice(0, -'.lua'.length));

describe('the Lua scripts of the Redis store', () => {
  it('are found (the checks are not vacuous)', () => {
    expect(scripts.length).toBeGreaterThan(20);
  });

  it('each open with a header naming the script and what it guarantees', () => {
    const bare = scripts.filter((name) => !new RegExp(`^-- ${name}: \\S`).test(readFileSync(`${LUA}/${name}.lua`, 'utf8')));
    expect(bare).toEqual([]);
  });

  it('each load with their includes in place and no include line left', () => {
    for (const name of scripts) expect(luaScript(name), name).not.toMatch(/@include/);
    expect(luaScript('taskFinish')).toContain('local function endTask');
    expect(luaScript('taskFinish').indexOf('local now')).toBeLessThan(luaScript('taskFinish').indexOf('local function endTask'));
  });
});
