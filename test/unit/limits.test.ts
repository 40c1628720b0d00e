/** Size limits of src/: no function over 100 lines, no file over 350. Known offenders may only shrink. */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');
const MAX_FUNCTION_LINES = 100;
const MAX_FILE_LINES = 350;
/** Today's offenders and their size (as formatted by Prettier): each may shrink, none may grow, and no new one may appear. */
const KNOWN: Record<string, number> = {};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every function-like node over `max` lines, as `file name` → lines. */
function longFunctions(file: string, text: string, max: number): Map<string, number> {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const found = new Map<string, number>();
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const name = node.name !== undefined && ts.isIdentifier(node.name) ? node.name.text : `<anonymous:${start + 1}>`;
      if (end - start + 1 > max) found.set(`${file} ${name}`, end - start + 1);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function offenders(): Map<string, number> {
  const all = new Map<string, number>();
  for (const path of sourceFiles(SRC)) {
    const file = relative(SRC, path);
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
    if (lines > MAX_FILE_LINES) all.set(file, lines);
    for (const [name, size] of longFunctions(file, text, MAX_FUNCTION_LINES)) all.set(name, size);
  }
  return all;
}

describe('size limits of src/', () => {
  it(`has no function over ${MAX_FUNCTION_LINES} lines and no file over ${MAX_FILE_LINES}, beyond the known ones (which may only shrink)`, () => {
    const grown = [...offenders()].filter(([name, size]) => size > (KNOWN[name] ?? 0)).map(([name, size]) => `${name}: ${size} lines`);
    expect(grown).toEqual([]);
  });

  it('finds a long function (the check can fail)', () => {
    const body = Array.from({ length: 120 }, (_, i) => `  const a${i} = ${i};`).join('\n');
    expect(longFunctions('x.ts', `export function long(): void {\n${body}\n}\n`, MAX_FUNCTION_LINES).get('x.ts long')).toBe(122);
  });
});
