import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../../src');

/**
 * The layers of src/, lowest first: a module may import its own folder (or file) and anything on a
 * lower floor, never a sibling on the same floor nor anything above. A new top-level folder or file
 * takes its floor here, the floor above everything it imports.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['errors.ts'],
  ['env.ts'],
  ['config.ts', 'json.ts', 'lazy-logger.ts', 'metrics.ts', 'schemas.ts', 'tracing/', 'client/'],
  ['store/', 'callers/'],
  ['tools/'],
  ['formats/', 'ledger/', 'sessions/', 'tasks/', 'calls/', 'credentials/', 'policy/', 'toolsets/', 'redaction/', 'guardrails/', 'audit/'],
  ['builtin/', 'sources/', 'mcp/', 'http/'],
  ['routes/'],
  ['app/'],
  ['server.ts', 'index.ts'],
  ['cli/'],
];

/** The layer unit of a path under src/: its top-level folder (`tools/`), or a top-level file. */
function unitOf(path: string): string {
  const slash = path.indexOf('/');
  return slash === -1 ? path : path.slice(0, slash + 1);
}

function floorOf(unit: string): number {
  const floor = FLOORS.findIndex((units) => units.includes(unit));
  if (floor === -1) throw new Error(`src/${unit} has no floor: add it to FLOORS in test/unit/layers.test.ts`);
  return floor;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Every file under `dir`, Lua scripts and the console's JavaScript included. */
function allSourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? allSourceFiles(path) : [path];
  });
}

/** `import … from '…'`, `export … from '…'`, `import '…'` and `import('…')` with a relative path. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(?\s*)'(\.{1,2}\/[^']+)'/g;

/** `import … from 'pkg'`, `import 'pkg'` and `import('pkg')` of a package (or a path inside it). */
const PACKAGE_IMPORT = (name: string): RegExp => new RegExp(`(?:\\bfrom\\s*|\\bimport\\s*\\(?\\s*)['"]${name}(?:/[^'"]*)?['"]`);

interface Arrow {
  from: string;
  to: string;
}

function importsOf(file: string): Arrow[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(SRC, file);
  return [...text.matchAll(IMPORT)].map((match) => ({ from, to: relative(SRC, resolve(dirname(file), match[1]!)) }));
}

function arrowsUp(arrows: readonly Arrow[]): string[] {
  return arrows
    .filter(({ from, to }) => {
      const [a, b] = [unitOf(from), unitOf(to)];
      return a !== b && floorOf(a) <= floorOf(b);
    })
    .map(({ from, to }) => `src/${from} -> src/${to}`);
}

/** The import circles among `arrows` (type-only imports count: a reader follows them too), each as its files, sorted. */
function circles(arrows: readonly Arrow[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of arrows) next.set(from, [...(next.get(from) ?? []), to]);
  // Tarjan's strongly connected components; a component of two files or more is a circle.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file)!, low.get(to)!));
      } else if (stack.includes(to)) low.set(file, Math.min(low.get(file)!, index.get(to)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let top = stack.pop()!; ; top = stack.pop()!) {
      component.push(top);
      if (top === file) break;
    }
    if (component.length > 1 || next.get(file)?.includes(file)) found.push(component.sort());
  };
  for (const file of next.keys()) if (!index.has(file)) visit(file);
  return found;
}

const arrows = sourceFiles(SRC).flatMap(importsOf);

describe('the import graph of src/', () => {
  it('reads the imports of the source (the check is not vacuous)', () => {
    expect(arrows.length).toBeGreaterThan(100);
    expect(arrows).toContainEqual({ from: 'tools/invoke.ts', to: 'tools/pipeline/index.ts' });
  });

  it('gives every top-level folder and file a floor', () => {
    const units = new Set(sourceFiles(SRC).map((file) => unitOf(relative(SRC, file))));
    for (const unit of units) expect(() => floorOf(unit), unit).not.toThrow();
  });

  it('has no arrow that runs back up or sideways between layers', () => {
    expect(arrowsUp(arrows)).toEqual([]);
  });

  it('has no import circles between files', () => {
    expect(circles(arrows)).toEqual([]);
  });

  it('finds a circle (the check can fail)', () => {
    const circle = [
      { from: 'tools/a.ts', to: 'tools/b.ts' },
      { from: 'tools/b.ts', to: 'tools/c.ts' },
      { from: 'tools/c.ts', to: 'tools/a.ts' },
      { from: 'tools/c.ts', to: 'json.ts' },
    ];
    expect(circles(circle)).toEqual([['tools/a.ts', 'tools/b.ts', 'tools/c.ts']]);
  });

  it('keeps tools/ free of the ledger and the sessions: it reaches them only through its seams', () => {
    const reaching = arrows.filter(({ from, to }) => from.startsWith('tools/') && (to.startsWith('ledger/') || to.startsWith('sessions/')));
    expect(reaching).toEqual([]);
  });

  it('keeps store/ beneath everything but the base modules', () => {
    const up = arrows.filter(({ from, to }) => from.startsWith('store/') && !to.startsWith('store/') && floorOf(unitOf(to)) > floorOf('config.ts'));
    expect(up).toEqual([]);
  });

  it('lets only store/redis/ know the Redis client: every other module reaches Redis through the Store interface', () => {
    const importing = sourceFiles(SRC)
      .filter((file) => PACKAGE_IMPORT('ioredis').test(readFileSync(file, 'utf8')))
      .map((file) => relative(SRC, file))
      .filter((file) => !file.startsWith('store/redis/'));
    expect(importing).toEqual([]);
  });

  it('finds an import of a package (the check can fail)', () => {
    expect(PACKAGE_IMPORT('ioredis').test("import type { Cluster, Redis } from 'ioredis';")).toBe(true);
    expect(PACKAGE_IMPORT('ioredis').test("const { Redis } = await import('ioredis');")).toBe(true);
    expect(PACKAGE_IMPORT('ioredis').test('// ioredis enableAutoPipelining')).toBe(false);
  });

  it("points comments at the project's own docs: no reference to a document outside the repository, no link to a missing page", () => {
    const texts = allSourceFiles(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')] as const);
    expect(texts.filter(([, text]) => text.includes('SPEC')).map(([file]) => file)).toEqual([]);
    const pages = new Set(texts.flatMap(([, text]) => [...text.matchAll(/\bdocs\/[\w-]+\.md\b/g)].map((match) => match[0])));
    expect(pages.size).toBeGreaterThan(10);
    expect([...pages].filter((page) => !existsSync(resolve(SRC, '..', page)))).toEqual([]);
  });

  it("points the tests' comments at the docs too: no section sign of an outside document", () => {
    const tests = resolve(SRC, '../test');
    const cited = allSourceFiles(tests).filter((file) => file !== fileURLToPath(import.meta.url) && readFileSync(file, 'utf8').includes('\u00a7'));
    expect(cited.map((file) => relative(tests, file))).toEqual([]);
  });

  it('finds an arrow that points back up (the check can fail)', () => {
    expect(arrowsUp([{ from: 'tools/invoke.ts', to: 'ledger/guard.ts' }])).toEqual(['src/tools/invoke.ts -> src/ledger/guard.ts']);
    expect(arrowsUp([{ from: 'store/redis/store.ts', to: 'routes/health.ts' }])).toHaveLength(1);
    expect(arrowsUp([{ from: 'ledger/guard.ts', to: 'sessions/runner.ts' }])).toHaveLength(1);
  });
});
