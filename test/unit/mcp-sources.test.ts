/** MCP sources (docs/mcp-sources.md): the `mcp:` entries checked with one clear line, and the mapping of tools and results. */
import { describe, expect, it } from 'vitest';
import { readMcpEntry } from '../../src/sources/mcp/config.ts';
import { toolResultOf, upstreamDefinition } from '../../src/sources/mcp/definitions.ts';
import type { ToolsFile } from '../../src/sources/tools-file.ts';
import { ToolFailure } from '../../src/tools/failure.ts';

const file: ToolsFile = {
  path: '/etc/toolport/tools.yaml',
  folder: '/etc/toolport',
  plugins: [],
  http: [],
  openapi: [],
  mcp: [],
  credentials: null,
  policy: [],
  guardrails: [],
  toolsets: undefined,
  variables: [],
};
const read = (value: Record<string, unknown>) => readMcpEntry({ where: 'mcp[0]', value }, file);
const problem = (value: Record<string, unknown>) => {
  try {
    read(value);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('the entry was accepted');
};

describe('mcp entries', () => {
  it('reads a stdio server, its cwd resolved from the file folder, and a Streamable HTTP one', () => {
    expect(read({ source: 'files', command: 'npx', args: ['-y', 'x'], env: { A: '1' }, cwd: 'data', pin: true })).toMatchObject({
      source: 'files',
      origin: { kind: 'mcp', name: 'files', label: 'TOOLS_FILE /etc/toolport/tools.yaml: mcp[0] "files"' },
      server: { kind: 'stdio', command: 'npx', args: ['-y', 'x'], env: { A: '1' }, cwd: '/etc/toolport/data' },
      pin: true,
    });
    const http = read({
      source: 'search',
      url: 'http://search:3000/mcp',
      headers: { Authorization: 'Bearer t' },
      timeout_ms: 500,
      tools: { find: { idempotency: { strategy: 'auto' } } },
    });
    expect(http).toMatchObject({ server: { kind: 'http', headers: { Authorization: 'Bearer t' } }, pin: false, defaults: { timeout_ms: 500 } });
    expect(http.tools.get('find')).toEqual({ idempotency: { strategy: 'auto' } });
  });

  it('stops the start with one line naming the file, the entry and the problem', () => {
    expect(problem({ source: 'files', command: 'npx', pins: true })).toMatch(/^TOOLS_FILE \/etc\/toolport\/tools\.yaml: mcp\[0\] "files": unknown key "pins"/);
    expect(problem({ source: 'files', command: 'npx', pin: 'yes' })).toMatch(/"files": pin must be true or false$/);
    expect(problem({ source: 'files', url: 'ftp://x/mcp' })).toMatch(/url must be an http\(s\) URL/);
    expect(problem({ source: 'files', url: 'http://x/mcp', args: ['a'] })).toMatch(/args belongs to a command server/);
    expect(problem({ source: 'files', command: 'npx', headers: { a: 'b' } })).toMatch(/headers belong to a url server/);
    expect(problem({ source: 'files', command: 'npx', idempotency: { strategy: 'custom' } })).toMatch(/custom/);
    expect(problem({ source: 'files', command: 'npx', tools: { read: { retries: 3 } } })).toMatch(/tools\.read\.retries is not one of/);
    for (const message of [problem({ source: 'files', command: 'npx', args: 'x' }), problem({ source: 'files', command: 'npx', timeout_ms: 0 })])
      expect(message).not.toContain('\n');
  });
});

describe('upstream tools and results', () => {
  const config = read({ source: 'Files', command: 'npx', tools: { 'Read File': { annotations: { destructive: false }, timeout_ms: 900 } } });

  it('names, describes (≤ 200), schemas and annotations an upstream tool; overrides apply', () => {
    const definition = upstreamDefinition(
      {
        name: 'Read File',
        description: 'x'.repeat(300),
        inputSchema: { type: 'object', $schema: 'http://json-schema.org/draft-07/schema#', properties: { path: { type: 'string' } } },
        outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      config,
    );
    expect(definition.name).toBe('files_read_file');
    expect(definition.description).toHaveLength(200);
    expect(definition.description.endsWith('…')).toBe(true);
    expect(definition.parameters).toEqual({ type: 'object', properties: { path: { type: 'string' } } });
    expect(definition.result).toEqual({ type: 'object', properties: { text: { type: 'string' } } });
    expect(definition.annotations).toEqual({ read_only: true, open_world: false, destructive: false });
    expect(definition.timeout_ms).toBe(900);
    expect(upstreamDefinition({ name: 'bare', inputSchema: { type: 'object' } }, config).description).toBe('Tool "bare" of the MCP server "Files".');
  });

  it('maps structuredContent to value, text to message, other blocks to attachments', () => {
    expect(
      toolResultOf(
        {
          content: [
            { type: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
        't',
      ),
    ).toEqual({ message: 'a\nb', value: null });
    expect(toolResultOf({ content: [{ type: 'text', text: 'done' }], structuredContent: { n: 1 } }, 't')).toEqual({ message: 'done', value: { n: 1 } });
    expect(toolResultOf({ content: [{ type: 'text', text: '{"n": 1}' }], structuredContent: { n: 1 } }, 't')).toMatchObject({
      exclude_value_from_context: true,
    });
    const image = { type: 'image', data: 'AAAA', mimeType: 'image/png' } as const;
    expect(toolResultOf({ content: [image] }, 't')).toEqual({ message: '', value: null, attachments: [image] });
  });

  it('turns isError into handler_error with the server’s own text', () => {
    let thrown: unknown;
    try {
      toolResultOf({ isError: true, content: [{ type: 'text', text: 'disk full' }] }, 'files_write');
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ToolFailure);
    expect(thrown).toMatchObject({ code: 'handler_error', message: 'Tool "files_write" failed: disk full', detail: 'disk full' });
  });
});
