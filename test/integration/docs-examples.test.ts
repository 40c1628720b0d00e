/**
 * Every `curl` example of README.md and docs/*.md runs against the real HTTP app (memory store,
 * the example calculator plugin, as the docs start it), in the order of its page, and answers what
 * the page documents. A stale example fails here. See test/helpers/doc-examples.ts for the markers.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app/index.ts';
import { loadConfig } from '../../src/config.ts';
import { curlOutput, curlRequest, matchesDocumented, parseDocFile, type DocFile } from '../helpers/doc-examples.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const files: DocFile[] = pages.map((page) => parseDocFile(page, readFileSync(path.join(ROOT, page), 'utf8')));

async function startApp(env: Record<string, string>): Promise<{ app: FastifyInstance; base: string }> {
  const previous = process.cwd();
  process.chdir(ROOT);
  try {
    const config = loadConfig({ LOG_LEVEL: 'silent', PORT: '0', TOOL_PLUGINS: 'examples/plugins/calculator.ts', ...env });
    const app = await buildApp(config);
    const address = await app.listen({ host: '127.0.0.1', port: 0 });
    return { app, base: address };
  } finally {
    process.chdir(previous);
  }
}

describe('the documentation examples', () => {
  it('finds the examples of the README and of the docs pages', () => {
    const count = files.reduce((n, f) => n + f.examples.length, 0);
    expect(count).toBeGreaterThan(25);
    expect(files.find((f) => f.file === 'README.md')!.examples.length).toBeGreaterThanOrEqual(6);
  });

  it('links every page of docs/ from the README, and no page links outside the repository', () => {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    for (const page of pages.filter((p) => p.startsWith('docs/'))) expect(readme, `README.md has no link to ${page}`).toContain(`(${page})`);
    for (const page of pages) {
      const text = readFileSync(path.join(ROOT, page), 'utf8');
      expect(text, page).not.toMatch(/\]\(https?:/);
      expect(text, page).not.toMatch(/\]\((\.\.\/)+\.\.\//);
    }
  });

  for (const { file, env, examples } of files.filter((f) => f.examples.length > 0)) {
    it(`${file}: every curl example answers what the page shows`, async () => {
      const { app, base } = await startApp(env);
      try {
        for (const example of examples) {
          const where = `${file}:${example.line}: ${example.command.split('\n')[0]}`;
          const { status, text } = await curlOutput(curlRequest(example.command, base));
          if (example.expected === null) {
            expect(status, `${where}\n(no answer documented, so it must succeed)\n${text.slice(0, 500)}`).toBeLessThan(300);
          } else {
            expect(matchesDocumented(example.expected, text), `${where}\ndocumented: ${example.expected}\nanswered:   ${text.slice(0, 2000)}`).toBe(true);
          }
        }
      } finally {
        await app.close();
      }
    }, 30_000);
  }
});
