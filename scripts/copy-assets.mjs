/**
 * After `tsc -p tsconfig.build.json`: copies what the compiled server reads from beside its modules
 * (the console's page and scripts, the Redis store's Lua scripts) from src/ into dist/.
 */
import { cpSync } from 'node:fs';

for (const folder of ['console', 'store/redis/lua']) {
  cpSync(new URL(`../src/${folder}/`, import.meta.url), new URL(`../dist/${folder}/`, import.meta.url), { recursive: true });
}
