/** The reader of documented curl examples: commands, answers, markers and the `…` pattern. */
import { describe, expect, it } from 'vitest';
import { curlRequest, matchesDocumented, parseDocFile, shellWords } from '../helpers/doc-examples.ts';

const page = [
  '<!-- doc-test: env WORKSPACE_ROOT=/tmp -->',
  '```sh',
  "curl -s localhost:8080/tools/invoke -H 'content-type: application/json' -d '{\"name\":",
  '  "add","arguments":{"a":1,"b":2}}\'',
  '# → "value":{"sum":3},…',
  '#    "replayed":false',
  '# a comment, not an answer',
  'curl -si -X DELETE localhost:8080/sessions/demo',
  '```',
  '',
  '<!-- doc-test: skip (needs a gateway) -->',
  '```sh',
  'curl -s localhost:4000/v1/responses',
  '```',
  '```sh',
  'curl -s localhost:8080/tools/add/versions',
  '```',
  '',
  '```json',
  '{"name":"add",',
  ' "versions":[…]}',
  '```',
].join('\n');

describe('documented curl examples', () => {
  it('reads commands over several lines, their answers, json answer blocks, skip and env markers', () => {
    const file = parseDocFile('page.md', page);
    expect(file.env).toEqual({ WORKSPACE_ROOT: '/tmp' });
    expect(file.examples.map((e) => [e.line, e.expected])).toEqual([
      [3, '"value":{"sum":3},…"replayed":false'],
      [8, null],
      [16, '{"name":"add","versions":[…]}'],
    ]);
  });

  it('turns a command into the request curl would send, to the test app instead of the documented host', () => {
    const [first, second] = parseDocFile('page.md', page).examples;
    expect(curlRequest(first!.command, 'http://127.0.0.1:9')).toEqual({
      method: 'POST',
      url: 'http://127.0.0.1:9/tools/invoke',
      headers: { 'content-type': 'application/json' },
      body: '{"name":\n  "add","arguments":{"a":1,"b":2}}',
      includeHeaders: false,
    });
    expect(curlRequest(second!.command, 'http://h')).toMatchObject({ method: 'DELETE', url: 'http://h/sessions/demo', includeHeaders: true });
    expect(shellWords(`a "b \\"c\\"" 'd e' f\\\n g`)).toEqual(['a', 'b "c"', 'd e', 'f', 'g']);
  });

  it('matches `…` to anything and nothing else', () => {
    expect(matchesDocumented('{"a":1,…,"c":3}', '{"a":1,"b":2,"c":3}')).toBe(true);
    expect(matchesDocumented('"hash":"ab12…"', '{"hash":"ab12ff"}')).toBe(true);
    expect(matchesDocumented('{"a":1,…,"c":4}', '{"a":1,"b":2,"c":3}')).toBe(false);
    expect(matchesDocumented('"hash":"ab12…"', '{"hash":"cd34"}')).toBe(false);
  });
});
