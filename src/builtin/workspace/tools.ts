/**
 * Workspace tools (docs/plugins-and-sources.md), registered when WORKSPACE_ROOT is set: list, read and write files
 * under the root. Every path goes through resolveInside; writes are atomic (temp file + rename).
 */
import { randomUUID } from 'node:crypto';
import { constants, type Dirent } from 'node:fs';
import { link, lstat, mkdir, open, readdir, rename, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { error, ok } from '../../tools/define.ts';
import type { PluginRegistry, ToolDefinition, ToolResult } from '../../tools/types.ts';
import { resolveInside } from './paths.ts';
import { PathRefused } from '../../errors.ts';

export const READ_DEFAULT_BYTES = 64 * 1024;
export const READ_MAX_BYTES = 1024 * 1024;
export const WRITE_MAX_BYTES = 1024 * 1024;
export const LIST_MAX_ENTRIES = 1000;

const pathArg = { type: 'string', maxLength: 1024, description: 'relative to the workspace root, "/" separated' };

type EntryType = 'file' | 'directory' | 'symlink' | 'other';
interface Entry {
  path: string;
  type: EntryType;
  size: number | null;
}

function typeOf(entry: Dirent): EntryType {
  return entry.isSymbolicLink() ? 'symlink' : entry.isDirectory() ? 'directory' : entry.isFile() ? 'file' : 'other';
}

/** Turns a refused path or a file-system error into a tool-level failure the model can act on. */
async function guarded<V>(run: () => Promise<ToolResult<V>>): Promise<ToolResult<V>> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof PathRefused) return error(`Refused: ${err.message}.`);
    const code = (err as NodeJS.ErrnoException).code;
    const known: Record<string, string> = {
      ENOENT: 'no such file or folder: call workspace_list to see what exists',
      ENOTDIR: 'a part of the path is a file, not a folder',
      EISDIR: 'the path is a folder, not a file: call workspace_list on it',
      EACCES: 'permission denied',
      EPERM: 'permission denied',
      ELOOP: 'the path is a symlink, which this tool does not follow',
      ENOSPC: 'the disk is full',
    };
    if (code !== undefined && known[code] !== undefined) return error(`Failed: ${known[code]}.`);
    throw err;
  }
}

function listTool(root: string): ToolDefinition<{ path?: string; recursive?: boolean; limit?: number }> {
  return {
    name: 'workspace_list',
    description: 'List the files and folders at a path of the workspace (recursively if asked), up to a limit.',
    parameters: {
      type: 'object',
      properties: { path: pathArg, recursive: { type: 'boolean' }, limit: { type: 'integer', minimum: 1, maximum: LIST_MAX_ENTRIES } },
    },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: ({ path: given = '.', recursive = false, limit = 200 }) =>
      guarded(async () => {
        const start = await resolveInside(root, given);
        if (!start.exists) return error(`Failed: "${start.relative}" does not exist. List "." to see the workspace.`);
        const entries: Entry[] = [];
        const pending = [start];
        let truncated = false;
        while (pending.length > 0 && !truncated) {
          const folder = pending.shift()!;
          const children = (await readdir(folder.absolute, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
          for (const child of children) {
            if (entries.length === limit) {
              truncated = true;
              break;
            }
            const relative = folder.relative === '.' ? child.name : `${folder.relative}/${child.name}`;
            const type = typeOf(child);
            const size = type === 'file' ? (await lstat(path.join(folder.absolute, child.name))).size : null;
            entries.push({ path: relative, type, size });
            // Symlinked folders are listed, never entered.
            if (recursive && type === 'directory') pending.push({ absolute: path.join(folder.absolute, child.name), relative, exists: true });
          }
        }
        const more = truncated ? ` (stopped at ${limit}: raise limit or list a sub-folder)` : '';
        return ok({ path: start.relative, entries, truncated }, `${entries.length} entries in "${start.relative}"${more}.`);
      }),
  };
}

function readTool(root: string): ToolDefinition<{ path: string; offset?: number; limit?: number }> {
  return {
    name: 'workspace_read',
    description: `Read a UTF-8 text file of the workspace, from a byte offset, at most limit bytes (default 64 KiB, at most 1 MiB).`,
    parameters: {
      type: 'object',
      properties: {
        path: pathArg,
        offset: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: READ_MAX_BYTES },
      },
      required: ['path'],
    },
    annotations: { read_only: true, destructive: false, idempotent: true, open_world: false },
    handler: ({ path: given, offset = 0, limit = READ_DEFAULT_BYTES }) =>
      guarded(async () => {
        const target = await resolveInside(root, given);
        // O_NOFOLLOW: a symlink swapped in after the check is refused rather than followed.
        const file = await open(target.absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
        try {
          const { size } = await file.stat();
          const buffer = Buffer.alloc(Math.max(0, Math.min(limit, size - offset)));
          const { bytesRead } = await file.read(buffer, 0, buffer.length, offset);
          let bytes = buffer.subarray(0, bytesRead);
          if (bytes.includes(0)) return error(`Failed: "${target.relative}" looks binary (it holds NUL bytes); only text files can be read.`);
          // Stop before a character cut in half at the end; the next read starts with it.
          if (offset + bytes.length < size) bytes = bytes.subarray(0, utf8Boundary(bytes));
          const end = offset + bytes.length;
          const nextOffset = end < size ? end : null;
          const more = nextOffset === null ? '' : ` Call again with offset ${nextOffset} for the rest.`;
          return ok(
            { path: target.relative, size, offset, bytes_read: bytes.length, next_offset: nextOffset, text: bytes.toString('utf8') },
            `Read ${bytes.length} of ${size} bytes of "${target.relative}".${more}`,
          );
        } finally {
          await file.close();
        }
      }),
  };
}

/** The length of the longest prefix of `bytes` that does not end inside a UTF-8 sequence. */
function utf8Boundary(bytes: Buffer): number {
  let start = bytes.length - 1;
  // Walk back over at most three continuation bytes to the lead byte of the last character.
  while (start > 0 && bytes.length - start < 4 && (bytes[start]! & 0xc0) === 0x80) start--;
  const lead = bytes[start] ?? 0;
  const width = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return start + width <= bytes.length ? bytes.length : start;
}

function writeTool(root: string): ToolDefinition<{ path: string; content: string; mode?: 'create' | 'overwrite' }> {
  return {
    name: 'workspace_write',
    description: 'Write a UTF-8 text file in the workspace, atomically. mode "create" (default) refuses an existing file; "overwrite" replaces it.',
    parameters: {
      type: 'object',
      properties: { path: pathArg, content: { type: 'string' }, mode: { type: 'string', enum: ['create', 'overwrite'] } },
      required: ['path', 'content'],
    },
    annotations: { read_only: false, destructive: true, idempotent: true, open_world: false },
    handler: ({ path: given, content, mode = 'create' }) =>
      guarded(async () => {
        const size = Buffer.byteLength(content, 'utf8');
        if (size > WRITE_MAX_BYTES)
          return error(`Refused: the content is ${size} bytes, more than the limit of ${WRITE_MAX_BYTES}. Write it in smaller files.`);
        const target = await resolveInside(root, given);
        if (target.relative === '.') return error('Refused: give the path of a file, not the workspace root.');
        if (target.exists) {
          const stat = await lstat(target.absolute);
          if (stat.isSymbolicLink()) return error(`Refused: "${target.relative}" is a symlink; write to the file it names instead.`);
          if (stat.isDirectory()) return error(`Refused: "${target.relative}" is a folder.`);
          if (mode === 'create') return error(`Refused: "${target.relative}" already exists. Use mode "overwrite" to replace it.`);
        }
        const folder = path.dirname(target.absolute);
        await mkdir(folder, { recursive: true });
        // The folder chain may have been created just now: check it again before writing into it.
        await resolveInside(root, path.relative(root, folder) || '.');
        const temp = path.join(folder, `.${path.basename(target.absolute)}.${randomUUID()}.tmp`);
        await writeFile(temp, content, { flag: 'wx', flush: true });
        try {
          // link() refuses an existing name, so "create" cannot clobber a file that appeared meanwhile.
          if (mode === 'create') await link(temp, target.absolute);
          else await rename(temp, target.absolute);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'EEXIST')
            return error(`Refused: "${target.relative}" already exists. Use mode "overwrite" to replace it.`);
          throw err;
        } finally {
          await unlink(temp).catch(() => undefined);
        }
        return ok({ path: target.relative, bytes: size, mode }, `Wrote ${size} bytes to "${target.relative}".`);
      }),
  };
}

export function registerWorkspaceTools(registry: PluginRegistry, root: string): void {
  for (const tool of [listTool(root), readTool(root), writeTool(root)]) registry.registerTool(tool as unknown as ToolDefinition);
}
