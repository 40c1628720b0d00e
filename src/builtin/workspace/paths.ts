/**
 * Paths inside the workspace root (TRAPS.md "Files"): refused when absolute, when they use `..`,
 * or when any existing part of them resolves, through a symlink, outside the root. Compared with
 * path.relative on real paths, never by string prefix.
 */
import { lstat, realpath } from 'node:fs/promises';
import path from 'node:path';
import { PathRefused } from '../../errors.ts';

const MAX_PATH_CHARS = 1024;

/** Whether `candidate` (a real path) is the root or inside it. */
export function isInside(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

/** Checks the text of a path the model gave; answers its segments. */
function segmentsOf(given: string): string[] {
  if (given.length > MAX_PATH_CHARS) throw new PathRefused(`the path is longer than ${MAX_PATH_CHARS} characters`);
  if (given.includes('\0')) throw new PathRefused('the path contains a NUL character');
  if (given.includes('\\')) throw new PathRefused('backslashes are not allowed: separate folders with "/"');
  if (path.isAbsolute(given) || /^[A-Za-z]:/.test(given)) {
    throw new PathRefused('absolute paths are not allowed: give a path relative to the workspace root');
  }
  const segments = given.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) throw new PathRefused('".." is not allowed: paths must stay inside the workspace root');
  return segments;
}

export interface ResolvedPath {
  /** Absolute path inside the root (not resolved through symlinks). */
  absolute: string;
  /** The path relative to the root, with "/" separators ("." for the root). */
  relative: string;
  /** Whether something exists at the path (a symlink counts, even a dangling one). */
  exists: boolean;
}

/**
 * Resolves `given` under `root` (itself a real path) and checks every existing step: a symlink on
 * the way must resolve inside the root. A missing tail is fine (a file about to be written).
 */
export async function resolveInside(root: string, given: string): Promise<ResolvedPath> {
  const segments = segmentsOf(given);
  let current = root;
  for (const [index, segment] of segments.entries()) {
    current = path.join(current, segment);
    const stat = await lstat(current).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT' || err.code === 'ENOTDIR') return null;
      throw err;
    });
    if (stat === null) return { absolute: path.join(root, ...segments), relative: segments.join('/') || '.', exists: false };
    if (stat.isSymbolicLink()) {
      const target = await realpath(current).catch(() => null);
      if (target === null || !isInside(root, target)) {
        throw new PathRefused(`"${segments.slice(0, index + 1).join('/')}" is a symlink that leads outside the workspace root (or nowhere)`);
      }
    }
  }
  return { absolute: current, relative: segments.join('/') || '.', exists: true };
}
