/**
 * A package name resolved from a folder, as Node would from a module in that folder: the nearest
 * `node_modules/<name>` upwards, then its `exports` (the `import`, `node` or `default` condition)
 * or `main`. A plugin package installed beside a tools file, in the user's own project, is found
 * even though toolport itself is installed elsewhere.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

const CONDITIONS = ['import', 'node', 'default'];

function pick(target: unknown): string | null {
  if (typeof target === 'string') return target;
  if (Array.isArray(target)) {
    for (const item of target) {
      const found = pick(item);
      if (found !== null) return found;
    }
    return null;
  }
  if (typeof target === 'object' && target !== null) {
    for (const [condition, value] of Object.entries(target)) {
      if (CONDITIONS.includes(condition)) {
        const found = pick(value);
        if (found !== null) return found;
      }
    }
  }
  return null;
}

function entryOf(manifest: Record<string, unknown>, subpath: string): string | null {
  const exports = manifest.exports;
  if (exports !== undefined && exports !== null) {
    const map =
      typeof exports === 'object' && !Array.isArray(exports) && Object.keys(exports).some((k) => k.startsWith('.'))
        ? (exports as Record<string, unknown>)
        : { '.': exports };
    return pick(map[subpath]);
  }
  if (subpath !== '.') return subpath;
  return typeof manifest.main === 'string' ? manifest.main : 'index.js';
}

/** The absolute file of `specifier` (`name`, `@scope/name`, `name/sub`) seen from `folder`, or null. */
export function resolvePackageEntry(specifier: string, folder: string): string | null {
  const parts = specifier.split('/');
  const nameParts = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, nameParts).join('/');
  const rest = parts.slice(nameParts).join('/');
  const subpath = rest === '' ? '.' : `./${rest}`;
  for (let dir = resolve(folder); ; dir = dirname(dir)) {
    const root = join(dir, 'node_modules', name);
    const manifestPath = join(root, 'package.json');
    if (existsSync(manifestPath)) {
      const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>;
      const entry = entryOf(manifest, subpath);
      return entry === null ? null : resolve(root, entry);
    }
    if (dirname(dir) === dir) return null;
  }
}
