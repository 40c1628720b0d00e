/** TOOLS_FILE: parsing, `${VAR}`, one clear line per problem, names made valid, clashes refused. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolSources } from '../../src/sources/index.ts';
import { readToolsFile } from '../../src/sources/tools-file.ts';
import { toolNameFor } from '../../src/sources/names.ts';
import { ToolRegistry } from '../../src/tools/registry.ts';
import { loadConfig } from '../../src/config.ts';
import { createStore } from '../../src/store/index.ts';
import { Provenance } from '../../src/tools/provenance.ts';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'toolport-tools-file-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const silent = pino({ level: 'silent' });

/** What sources are handed besides the registry: a memory store, provenance over it, a version. */
async function sourceDeps(registry: ToolRegistry) {
  const store = await createStore(loadConfig({ LOG_LEVEL: 'silent' }), silent);
  return { store, provenance: new Provenance(store, registry, silent), version: 'test' };
}

async function fileWith(name: string, text: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, text);
  return path;
}

/** Loads the file into a fresh registry and returns the one-line error it must stop with. */
async function startFailure(path: string, env: Record<string, string> = {}): Promise<string> {
  try {
    const registry = new ToolRegistry();
    const sources = await loadToolSources({ registry, file: path, log: silent, env, ...(await sourceDeps(registry)) });
    await sources.close();
  } catch (err) {
    if (!(err instanceof Error)) throw err;
    expect(err.message).not.toContain('\n');
    return err.message;
  }
  throw new Error(`expected ${path} to stop the start`);
}

const weather = (extra = '') => `
http:
  - name: weather_now
    description: Current weather for a city.
    parameters: {type: object, properties: {city: {type: string}}, required: [city]}
    endpoint: {url: "http://127.0.0.1:9/now", headers: {Authorization: "Bearer \${WEATHER_TOKEN}"}}
${extra}`;

describe('TOOLS_FILE', () => {
  it('expands ${VAR} in values from the environment, and $${VAR} stands for itself', async () => {
    const path = await fileWith('vars.yaml', 'http:\n  - {name: a, description: "costs $${PRICE}", url: "${BASE}/x"}\n');
    const file = await readToolsFile(path, { BASE: 'http://h:1' });
    expect(file.http[0]!.value).toEqual({ name: 'a', description: 'costs ${PRICE}', url: 'http://h:1/x' });
    expect(file.folder).toBe(folder);
  });

  it('stops the start naming a missing variable, its entry and field, never a value', async () => {
    const message = await startFailure(await fileWith('missing.yaml', weather()), { OTHER: 'secret-value' });
    expect(message).toBe(`TOOLS_FILE ${join(folder, 'missing.yaml')}: http[0].endpoint.headers.Authorization: environment variable WEATHER_TOKEN is not set`);
  });

  it('stops the start on a file that cannot be read or parsed, or has an unknown section', async () => {
    expect(await startFailure(join(folder, 'nowhere.yaml'))).toMatch(/TOOLS_FILE .*nowhere\.yaml: cannot be read: no such file/);
    expect(await startFailure(await fileWith('bad.yaml', 'http: [\n  - a: b\n'))).toMatch(/bad\.yaml: not valid YAML: /);
    expect(await startFailure(await fileWith('bad.json', '{"http": [}'))).toMatch(/bad\.json: not valid JSON: /);
    expect(await startFailure(await fileWith('list.yaml', '- a\n- b\n'))).toMatch(
      /list\.yaml: must be a mapping with any of the sections plugins, http, openapi, mcp/,
    );
    expect(await startFailure(await fileWith('section.yaml', 'htttp: []\n'))).toMatch(/section\.yaml: unknown section "htttp"/);
    expect(await startFailure(await fileWith('notlist.yaml', 'http: {name: a}\n'))).toMatch(/notlist\.yaml: http must be a list/);
    expect(await startFailure(await fileWith('dupkey.yaml', 'http: []\nhttp: []\n'))).toMatch(/dupkey\.yaml: not valid YAML: .*unique/i);
  });

  it('stops the start naming the entry and the field of a bad HTTP tool', async () => {
    const env = { WEATHER_TOKEN: 't' };
    expect(await startFailure(await fileWith('typo.yaml', weather('    timeout: 5000')), env)).toMatch(
      /typo\.yaml: http\[0\] "weather_now": unknown key "timeout"/,
    );
    const noUrl = await fileWith('nourl.yaml', 'http:\n  - {name: a, description: d, parameters: {type: object}, endpoint: {url: "ftp://x/y"}}\n');
    expect(await startFailure(noUrl)).toMatch(/nourl\.yaml: http\[0\] "a": endpoint: url must be an http\(s\) URL, got "ftp:"/);
    const get = await fileWith('get.yaml', 'http:\n  - {name: a, description: d, parameters: {type: object}, endpoint: {url: "http://x/y", method: GET}}\n');
    expect(await startFailure(get)).toMatch(/get\.yaml: http\[0\] "a": endpoint: method must be one of POST, PUT, PATCH/);
    const badName = await fileWith('name.yaml', 'http:\n  - {name: "Bad Name", description: d, parameters: {type: object}, endpoint: {url: "http://x/y"}}\n');
    expect(await startFailure(badName)).toMatch(/name\.yaml: http\[0\]: tool "Bad Name": name must match/);
    const custom = await fileWith(
      'custom.yaml',
      'http:\n  - {name: a, description: d, parameters: {type: object}, endpoint: {url: "http://x/y"}, idempotency: {strategy: custom}}\n',
    );
    expect(await startFailure(custom)).toMatch(/custom\.yaml: http\[0\] "a": idempotency.strategy "custom" needs a key function/);
  });

  it('reads on_lost: rerun by default for an HTTP tool with a ledger strategy, unknown when declared, and refuses other values', async () => {
    const tool = (name: string, extra: string) =>
      `  - {name: ${name}, description: d, parameters: {type: object}, endpoint: {url: "http://127.0.0.1:9/y"}, idempotency: {strategy: auto}${extra}}\n`;
    const file = await fileWith('lost.yaml', `http:\n${tool('pay_default', '')}${tool('pay_unknown', ', on_lost: unknown')}`);
    const registry = new ToolRegistry();
    const sources = await loadToolSources({ registry, file, log: silent, env: {}, ...(await sourceDeps(registry)) });
    try {
      expect(registry.get('pay_default')?.idempotency?.on_lost).toBe('rerun');
      expect(registry.get('pay_unknown')?.idempotency?.on_lost).toBe('unknown');
    } finally {
      await sources.close();
    }
    const bad = await fileWith('lost-bad.yaml', `http:\n${tool('a', ', on_lost: sometimes')}`);
    expect(await startFailure(bad)).toMatch(/lost-bad\.yaml: http\[0\] "a": on_lost must be rerun or unknown/);
  });

  it('stops the start on a bad breaker or limit, and on HTTP tools of one origin that set different limits', async () => {
    const tool = (name: string, limits: string) =>
      `  - {name: ${name}, description: d, parameters: {type: object}, endpoint: {url: "http://x:81/${name}"}${limits === '' ? '' : `, ${limits}`}}\n`;
    const cases: [string, RegExp][] = [
      ['breaker: {failures: 0}', /http\[0\] "a": breaker.failures must be a positive whole number/],
      ['breaker: {open_s: -1}', /http\[0\] "a": breaker.open_s must be a number of seconds above 0/],
      ['breaker: {failure: 3}', /http\[0\] "a": breaker.failure is not one of failures, open_s/],
      ['breaker: true', /http\[0\] "a": breaker must be a mapping \{failures, open_s\}, or false/],
      ['max_concurrency: "2"', /http\[0\] "a": max_concurrency must be a positive whole number/],
      ['rate_per_min: 0', /http\[0\] "a": rate_per_min must be a positive whole number/],
      ['rate_per_min_per_caller: 1.5', /http\[0\] "a": rate_per_min_per_caller must be a positive whole number/],
    ];
    for (const [limits, problem] of cases) expect(await startFailure(await fileWith('limits.yaml', `http:\n${tool('a', limits)}`))).toMatch(problem);
    const disagree = await fileWith('origin.yaml', `http:\n${tool('a', 'max_concurrency: 2')}${tool('b', '')}${tool('c', 'max_concurrency: 3')}`);
    expect(await startFailure(disagree)).toMatch(
      /http\[2\] "c": its limits \(.*max_concurrency: 3.*\) differ from those http\[0\] "a" sets for the same origin http:\/\/x:81; the tools of one origin share them/,
    );
    const mcp = await fileWith('mcp-limits.yaml', 'mcp:\n  - {source: files, command: npx, breaker: {failures: 2, open_s: 0}}\n');
    expect(await startFailure(mcp)).toMatch(/mcp\[0\] "files": breaker.open_s must be a number of seconds above 0/);
  });

  it('stops the start when two sources produce one name, naming both', async () => {
    const path = await fileWith(
      'clash.yaml',
      `${weather()}  - name: weather_now\n    description: again\n    parameters: {type: object}\n    endpoint: {url: "http://x/y"}\n`,
    );
    expect(await startFailure(path, { WEATHER_TOKEN: 't' })).toMatch(
      /clash\.yaml: http\[1\]: tool "weather_now": name is already taken by TOOLS_FILE .*clash\.yaml: http\[0\]/,
    );
  });

  it('checks every openapi and mcp source name: valid, unique, and an MCP server names one transport', async () => {
    expect(await startFailure(await fileWith('src1.yaml', 'mcp:\n  - {source: "Files!", command: npx}\n'))).toMatch(
      /src1\.yaml: mcp\[0\] "Files!": source must match/,
    );
    expect(
      await startFailure(await fileWith('src2.yaml', 'openapi:\n  - {source: pets, spec: ./a.yaml}\nmcp:\n  - {source: pets, url: "http://x/mcp"}\n')),
    ).toMatch(/src2\.yaml: mcp\[0\] "pets": source "pets" is already used by openapi\[0\]/);
    expect(await startFailure(await fileWith('src3.yaml', 'mcp:\n  - {source: files, command: npx, url: "http://x/mcp"}\n'))).toMatch(
      /src3\.yaml: mcp\[0\] "files": an MCP server needs exactly one of command/,
    );
  });

  it('loads plugins listed in the file, resolved from the file folder', async () => {
    await writeFile(
      join(folder, 'one.mjs'),
      "export default {name: 'one_tool', description: 'One.', parameters: {type: 'object'}, handler: () => ({message: 'one'})};\n",
    );
    const path = await fileWith('plugins.yaml', 'plugins: [./one.mjs]\n');
    const registry = new ToolRegistry();
    const sources = await loadToolSources({ registry, file: path, log: silent, env: {}, ...(await sourceDeps(registry)) });
    await sources.close();
    expect(registry.get('one_tool')?.source.label).toBe('./one.mjs');
  });

  it('takes a plugin entry as {module, isolation} and names a bad one', async () => {
    await writeFile(
      join(folder, 'two.mjs'),
      "export default {name: 'two_tool', description: 'Two.', parameters: {type: 'object'}, handler: () => ({message: 'two'})};\n",
    );
    const good = await fileWith('isolated.yaml', 'plugins: [{module: ./two.mjs, isolation: none}]\n');
    const registry = new ToolRegistry();
    const sources = await loadToolSources({ registry, file: good, log: silent, env: {}, ...(await sourceDeps(registry)) });
    await sources.close();
    expect(registry.get('two_tool')?.source.label).toBe('./two.mjs');
    const bad = await fileWith('bad-isolation.yaml', 'plugins: [{module: ./two.mjs, isolation: threads}]\n');
    expect(await startFailure(bad)).toMatch(/bad-isolation\.yaml: plugins\[0\]: isolation must be none or worker$/);
    const typo = await fileWith('typo-isolation.yaml', 'plugins: [{modul: ./two.mjs}]\n');
    expect(await startFailure(typo)).toMatch(/plugins\[0\]: unknown key "modul" \(allowed: module, isolation\)$/);
  });
});

describe('toolNameFor', () => {
  it('lower-cases and turns every other character into _', () => {
    expect(toolNameFor('petstore', 'getPetById')).toBe('petstore_getpetbyid');
    expect(toolNameFor('files', 'read file/v2.1')).toBe('files_read_file_v2_1');
    expect(toolNameFor(null, 'Ünïcode-ok')).toBe('_n_code-ok');
  });

  it('cuts names over 64 characters and ends them with a hash of the whole name, so long names stay apart', () => {
    const a = toolNameFor('src', `${'x'.repeat(80)}_alpha`);
    const b = toolNameFor('src', `${'x'.repeat(80)}_beta`);
    expect(a).toHaveLength(64);
    expect(b).toHaveLength(64);
    expect(a).not.toBe(b);
    expect(a).toMatch(/^[a-z0-9_-]{55}_[0-9a-f]{8}$/);
    expect(toolNameFor('src', 'y'.repeat(60))).toBe(`src_${'y'.repeat(60)}`);
  });
});
