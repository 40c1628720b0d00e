/** Workspace tools (docs/plugins-and-sources.md): happy paths, size caps, and every way out of the root refused. */
import { mkdtemp, mkdir, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeApp, post } from '../helpers/app.ts';

let root: string;
let outside: string;
let app: FastifyInstance;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'toolport-ws-'));
  outside = await mkdtemp(path.join(tmpdir(), 'toolport-outside-'));
  await writeFile(path.join(outside, 'secret.txt'), 'outside secret');
  await mkdir(path.join(root, 'docs/deep'), { recursive: true });
  await writeFile(path.join(root, 'readme.md'), '# hello\n');
  await writeFile(path.join(root, 'docs/a.txt'), 'alpha');
  await writeFile(path.join(root, 'docs/deep/b.txt'), 'beta');
  await writeFile(path.join(root, 'bin.dat'), Buffer.from([1, 2, 0, 3]));
  await symlink('/etc', path.join(root, 'etc_link'));
  await symlink(outside, path.join(root, 'outside_dir'));
  await symlink(path.join(outside, 'secret.txt'), path.join(root, 'secret_link.txt'));
  await symlink(path.join(root, 'docs'), path.join(root, 'docs_link'));
  app = await makeApp('memory', { env: { WORKSPACE_ROOT: root, MAX_BODY_BYTES: String(4 * 1024 * 1024) } });
});
afterAll(async () => {
  await app.close();
  await rm(root, { recursive: true, force: true });
  await rm(outside, { recursive: true, force: true });
});

const call = async (name: string, args: Record<string, unknown>) => (await post(app, { name, arguments: args })).body;

describe('workspace_list', () => {
  it('lists a folder, sorted, with types and sizes', async () => {
    const result = await call('workspace_list', {});
    expect(result.success).toBe(true);
    expect(result.value.entries).toEqual([
      { path: 'bin.dat', type: 'file', size: 4 },
      { path: 'docs', type: 'directory', size: null },
      { path: 'docs_link', type: 'symlink', size: null },
      { path: 'etc_link', type: 'symlink', size: null },
      { path: 'outside_dir', type: 'symlink', size: null },
      { path: 'readme.md', type: 'file', size: 8 },
      { path: 'secret_link.txt', type: 'symlink', size: null },
    ]);
  });

  it('walks folders recursively without entering symlinks, up to the limit', async () => {
    const all = await call('workspace_list', { path: 'docs', recursive: true });
    expect(all.value.entries.map((e: { path: string }) => e.path)).toEqual(['docs/a.txt', 'docs/deep', 'docs/deep/b.txt']);
    const capped = await call('workspace_list', { recursive: true, limit: 3 });
    expect(capped.value.entries).toHaveLength(3);
    expect(capped.value.truncated).toBe(true);
    expect(capped.message).toMatch(/raise limit/);
  });

  it('lists a folder reached through a symlink that stays inside the root', async () => {
    const result = await call('workspace_list', { path: 'docs_link' });
    expect(result.value.entries.map((e: { path: string }) => e.path)).toEqual(['docs_link/a.txt', 'docs_link/deep']);
  });
});

describe('workspace_read', () => {
  it('reads a text file, or a byte range of it with the offset to continue from', async () => {
    expect((await call('workspace_read', { path: 'docs/a.txt' })).value).toMatchObject({ text: 'alpha', size: 5, next_offset: null });
    const part = await call('workspace_read', { path: 'docs/a.txt', offset: 1, limit: 2 });
    expect(part.value).toMatchObject({ text: 'lp', offset: 1, bytes_read: 2, next_offset: 3 });
    expect(part.message).toMatch(/offset 3/);
  });

  it('never cuts a UTF-8 character in half', async () => {
    await writeFile(path.join(root, 'utf8.txt'), 'aé€😀'); // 1 + 2 + 3 + 4 bytes
    const first = await call('workspace_read', { path: 'utf8.txt', limit: 5 }); // would cut "€"
    expect(first.value).toMatchObject({ text: 'aé', next_offset: 3 });
    const rest = await call('workspace_read', { path: 'utf8.txt', offset: 3 });
    expect(rest.value.text).toBe('€😀');
  });

  it('refuses binary files, folders, missing files and limits over the cap', async () => {
    expect((await call('workspace_read', { path: 'bin.dat' })).message).toMatch(/binary/);
    expect((await call('workspace_read', { path: 'docs' })).message).toMatch(/folder/);
    expect((await call('workspace_read', { path: 'nope.txt' })).message).toMatch(/no such file.*workspace_list/);
    expect((await call('workspace_read', { path: 'readme.md', limit: 1024 * 1024 + 1 })).error.code).toBe('invalid_arguments');
  });
});

describe('workspace_write', () => {
  it('creates a file (and its folders), refuses to clobber it in create mode, replaces it in overwrite mode', async () => {
    const created = await call('workspace_write', { path: 'out/new/file.txt', content: 'one' });
    expect(created).toMatchObject({ success: true, value: { path: 'out/new/file.txt', bytes: 3, mode: 'create' } });
    expect(await readFile(path.join(root, 'out/new/file.txt'), 'utf8')).toBe('one');
    const again = await call('workspace_write', { path: 'out/new/file.txt', content: 'two' });
    expect(again).toMatchObject({ success: false, error: { code: 'tool_failed' } });
    expect(again.message).toMatch(/already exists.*overwrite/);
    expect((await call('workspace_write', { path: 'out/new/file.txt', content: 'two', mode: 'overwrite' })).success).toBe(true);
    expect(await readFile(path.join(root, 'out/new/file.txt'), 'utf8')).toBe('two');
    // The temp files of the atomic writes are gone.
    expect(await readdir(path.join(root, 'out/new'))).toEqual(['file.txt']);
  });

  it('refuses content over 1 MiB, a folder, and a symlink as the target', async () => {
    const big = await call('workspace_write', { path: 'big.txt', content: 'x'.repeat(1024 * 1024 + 1) });
    expect(big.message).toMatch(/more than the limit/);
    expect((await call('workspace_write', { path: 'docs', content: 'x', mode: 'overwrite' })).message).toMatch(/is a folder/);
    expect((await call('workspace_write', { path: 'docs_link', content: 'x', mode: 'overwrite' })).message).toMatch(/symlink/);
  });
});

describe('paths that leave the workspace', () => {
  const escapes: [string, string, RegExp][] = [
    ['an absolute path', '/etc/passwd', /absolute paths are not allowed/],
    ['a parent folder', '../outside.txt', /"\.\." is not allowed/],
    ['a parent folder in the middle', 'docs/../../x', /"\.\." is not allowed/],
    ['backslash separators', '..\\..\\etc\\passwd', /backslashes are not allowed/],
    ['a Windows drive', 'C:/Windows/win.ini', /absolute paths/],
    ['a symlink to /etc', 'etc_link/passwd', /"etc_link" is a symlink that leads outside/],
    ['a symlinked folder outside the root', 'outside_dir/secret.txt', /"outside_dir" is a symlink that leads outside/],
    ['a symlinked file outside the root', 'secret_link.txt', /"secret_link.txt" is a symlink that leads outside/],
    ['a NUL byte', 'readme.md\u0000.txt', /NUL/],
  ];

  it.each(escapes)('refuses %s for read, list and write, naming the rule', async (_what, given, rule) => {
    for (const [name, args] of [
      ['workspace_read', { path: given }],
      ['workspace_list', { path: given }],
      ['workspace_write', { path: given, content: 'pwned', mode: 'overwrite' }],
    ] as const) {
      const result = await call(name, args);
      expect(result, `${name} ${given}`).toMatchObject({ success: false, error: { code: 'tool_failed' } });
      expect(result.message).toMatch(/^Refused: /);
      expect(result.message).toMatch(rule);
    }
    expect(await readFile(path.join(outside, 'secret.txt'), 'utf8')).toBe('outside secret');
  });

  it('treats URL-encoded separators as plain characters of a name inside the root', async () => {
    const read = await call('workspace_read', { path: '..%2F..%2Fetc%2Fpasswd' });
    expect(read.message).toMatch(/no such file/);
    const written = await call('workspace_write', { path: '%2e%2e%2fescape.txt', content: 'inside' });
    expect(written.success).toBe(true);
    expect(await readFile(path.join(root, '%2e%2e%2fescape.txt'), 'utf8')).toBe('inside');
    expect(await readdir(outside)).toEqual(['secret.txt']);
  });
});

describe('WORKSPACE_ROOT', () => {
  it('registers no workspace tools when unset, and refuses a root that is not a folder', async () => {
    const plain = await makeApp('memory');
    try {
      expect(plain.toolport.registry.get('workspace_read')).toBeUndefined();
    } finally {
      await plain.close();
    }
    await expect(makeApp('memory', { env: { WORKSPACE_ROOT: path.join(root, 'readme.md') } })).rejects.toThrow(/WORKSPACE_ROOT .* is not an existing folder/);
  });
});
