/**
 * A plugin module found and imported: the same steps in the main thread (src/tools/plugins.ts) and in
 * an isolated handler's worker (./isolation/worker.ts), so both see the same module.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { resolvePackageEntry } from './package-entry.ts';

/**
 * A path (relative to `cwd`) or a package name, found from `cwd` first (the user's project, or
 * the tools file's folder), else from toolport's own location.
 */
export function specifierOf(entry: string, cwd: string): string {
  const looksLikePath = entry.startsWith('.') || isAbsolute(entry) || /\.(m?js|c?js|m?ts|cts)$/.test(entry);
  if (looksLikePath) return pathToFileURL(resolve(cwd, entry)).href;
  const found = resolvePackageEntry(entry, cwd);
  return found === null ? entry : pathToFileURL(found).href;
}

/** Whether the nearest package.json above `file` says `"type": "module"`. */
function inModulePackage(file: string): boolean {
  for (let folder = dirname(file); ; folder = dirname(folder)) {
    const manifest = join(folder, 'package.json');
    if (existsSync(manifest)) {
      try {
        return (JSON.parse(readFileSync(manifest, 'utf8')) as { type?: unknown }).type === 'module';
      } catch {
        return false;
      }
    }
    if (dirname(folder) === folder) return false;
  }
}

/**
 * A TypeScript file its project treats as CommonJS (`.cts`, or `.ts` without `"type": "module"`)
 * cannot go through `import()`: Node hands it to the CommonJS loader, which meets ES syntax and
 * fails with "require() … in a cycle". tsx's own importer compiles it in either module system.
 */
export async function importModule(specifier: string): Promise<{ default?: unknown }> {
  const file = specifier.startsWith('file:') ? fileURLToPath(specifier) : null;
  if (file !== null && (file.endsWith('.cts') || (file.endsWith('.ts') && !inModulePackage(file)))) {
    const { tsImport } = await import('tsx/esm/api');
    return (await tsImport(specifier, import.meta.url)) as { default?: unknown };
  }
  return (await import(specifier)) as { default?: unknown };
}

/** The definitions a module exports: ES `export default`, or CommonJS `module.exports` (and compiled `exports.default`). */
export function exportedBy(module: { default?: unknown }): unknown {
  const exported = module.default;
  const inner = typeof exported === 'object' && exported !== null && !Array.isArray(exported) ? (exported as { default?: unknown; handler?: unknown }) : null;
  return inner !== null && inner.default !== undefined && inner.handler === undefined ? inner.default : exported;
}
