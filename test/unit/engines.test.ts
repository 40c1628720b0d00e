/**
 * Node 24, honestly: every package the lock file installs accepts the Node versions package.json's
 * `engines` promises and the Docker image runs, so `npm ci` prints no EBADENGINE and nothing breaks
 * at run time on a version we claim.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const json = (file: string) => JSON.parse(readFileSync(path.join(ROOT, file), 'utf8'));
const manifest = json('package.json') as { engines: { node: string } };
const lock = json('package-lock.json') as { packages: Record<string, { version?: string; engines?: { node?: string } | string[]; dev?: boolean }> };
const imageMajor = Number(/^FROM node:(\d+)/m.exec(readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8'))?.[1]);

/** Each installed package with the Node range it declares. */
const declared = Object.entries(lock.packages)
  .filter(([location, entry]) => location !== '' && !Array.isArray(entry.engines) && typeof entry.engines?.node === 'string')
  .map(([location, entry]) => ({ name: `${location.replace(/^.*node_modules\//, '')}@${entry.version}`, range: (entry.engines as { node: string }).node }));

describe('Node engines', () => {
  it('promises the Node line the image runs', () => {
    const lowest = semver.minVersion(manifest.engines.node);
    expect(lowest).not.toBeNull();
    expect(lowest!.major).toBe(imageMajor);
  });

  it('installs no package whose engine range excludes the lowest Node version engines allows', () => {
    const lowest = semver.minVersion(manifest.engines.node)!.version;
    expect(declared.length).toBeGreaterThan(50);
    const excluding = declared.filter(({ range }) => !semver.satisfies(lowest, range)).map(({ name, range }) => `${name} wants node ${range}`);
    expect(excluding, `engines says ${manifest.engines.node}`).toEqual([]);
  });

  it("installs no package that excludes the rest of the image's Node line", () => {
    const line = `>=${semver.minVersion(manifest.engines.node)!.version} <${imageMajor + 1}.0.0-0`;
    const excluding = declared.filter(({ range }) => !semver.subset(line, range)).map(({ name, range }) => `${name} wants node ${range}`);
    expect(excluding, `the image runs node ${imageMajor} (${line})`).toEqual([]);
  });

  it('runs the tests on a Node version engines allows', () => {
    expect(semver.satisfies(process.version, manifest.engines.node)).toBe(true);
  });
});
