/**
 * OpenAPI tools (docs/tool-sources.md): the real Swagger Petstore 3 document, imported through TOOLS_FILE and
 * served by a small implementation of it; listed in every provider format, called with path,
 * query, header and body arguments, and refused at start when an include glob matches nothing.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, makeApp, post } from '../helpers/app.ts';
import { PETSTORE_DOCUMENT, startPetstore, type Petstore } from '../helpers/petstore.ts';

const ALL_OPERATIONS = [
  'addPet',
  'updatePet',
  'findPetsByStatus',
  'findPetsByTags',
  'getPetById',
  'updatePetWithForm',
  'deletePet',
  'uploadFile',
  'getInventory',
  'placeOrder',
  'getOrderById',
  'deleteOrder',
  'createUser',
  'createUsersWithListInput',
  'loginUser',
  'logoutUser',
  'getUserByName',
  'updateUser',
  'deleteUser',
];
const FORMATS = ['native', 'openai', 'openai-responses', 'anthropic', 'gemini', 'mcp'];

let petstore: Petstore;
let folder: string;
let app: FastifyInstance;

async function toolsFile(name: string, text: string): Promise<string> {
  const path = join(folder, name);
  await writeFile(path, text);
  return path;
}

beforeAll(async () => {
  petstore = await startPetstore();
  folder = await mkdtemp(join(tmpdir(), 'toolport-openapi-'));
  const file = await toolsFile(
    'tools.yaml',
    `openapi:
  - source: petstore
    spec: ${PETSTORE_DOCUMENT}
    base_url: "${petstore.url}/api/v3"
    headers: {api_key: "special-key"}
    tools:
      getPetById: {timeout_ms: 4000, annotations: {read_only: true}}
  - source: pets
    spec: "${petstore.url}/openapi.yaml"
    include: ["getPetById", "findPets*"]
`,
  );
  app = await makeApp('memory', { env: { TOOLS_FILE: file } });
});

afterAll(async () => {
  await app?.close();
  await Promise.all([petstore?.stop(), rm(folder, { recursive: true, force: true })]);
});

const call = (name: string, args: Record<string, unknown> = {}) => post(app, { name, arguments: args });

describe('OpenAPI tools: the Petstore document', () => {
  it('lists every included operation in every provider format', async () => {
    const expected = [...ALL_OPERATIONS.map((o) => `petstore_${o.toLowerCase()}`), 'pets_findpetsbystatus', 'pets_findpetsbytags', 'pets_getpetbyid'].sort();
    for (const format of FORMATS) {
      const { status, body } = await get(app, `/tools?format=${format}`);
      expect(status, format).toBe(200);
      const entries = format === 'gemini' ? (body.tools as any[]).flatMap((t) => t.functionDeclarations) : (body.tools as any[]);
      const names = entries.map((t) => t.name ?? t.function?.name).filter((n: string) => /^pets?(tore)?_/.test(n));
      expect(names.sort(), format).toEqual(expected);
    }
  });

  it('builds each tool from its operation: description, parameters from path, query, header and body, result from the 2xx answer', async () => {
    const { body } = await get(app, '/tools/petstore_getpetbyid');
    expect(body.description).toBe('Returns a single pet');
    expect(body.parameters).toMatchObject({ type: 'object', required: ['petId'], properties: { petId: { type: 'integer', format: 'int64' } } });
    expect(body.result).toMatchObject({ type: 'object', required: ['name', 'photoUrls'] });
    expect(body.annotations).toEqual({ read_only: true });
    const deletePet = (await get(app, '/tools/petstore_deletepet')).body;
    expect(Object.keys(deletePet.parameters.properties).sort()).toEqual(['api_key', 'petId']);
    const addPet = (await get(app, '/tools/petstore_addpet')).body;
    expect(addPet.parameters.required).toEqual(['body']);
    expect(addPet.parameters.properties.body.required).toEqual(['name', 'photoUrls']);
    expect(JSON.stringify(addPet)).not.toMatch(/"(xml|example|x-swagger-router-model)"/);
  });

  it('calls operations with a JSON body, path, query and header parameters', async () => {
    const added = await call('petstore_addpet', { body: { id: 7, name: 'Rex', photoUrls: [], status: 'available', tags: [{ name: 'good boy' }] } });
    expect(added.body.success).toBe(true);
    expect(added.body.value).toMatchObject({ id: 7, name: 'Rex' });
    expect(petstore.lastHeaders()['content-type']).toBe('application/json');
    expect(petstore.lastHeaders().api_key).toBe('special-key');

    const fetched = await call('petstore_getpetbyid', { petId: 7 });
    expect(fetched.body.value.name).toBe('Rex');
    expect(petstore.requests.at(-1)).toBe('GET /api/v3/pet/7');

    const byStatus = await call('pets_findpetsbystatus', { status: 'available' });
    expect(byStatus.body.error).toBeNull();
    expect(byStatus.body.value.map((p: { id: number }) => p.id)).toEqual([7]);
    expect(petstore.requests.at(-1)).toBe('GET /v3/pet/findByStatus?status=available');

    const byTags = await call('petstore_findpetsbytags', { tags: ['good boy', 'other'] });
    expect(byTags.body.value).toHaveLength(1);
    expect(petstore.requests.at(-1)).toBe('GET /api/v3/pet/findByTags?tags=good%20boy&tags=other');

    const renamed = await call('petstore_updatepetwithform', { petId: 7, name: 'Rex II' });
    expect(renamed.body.success).toBe(true);

    const deleted = await call('petstore_deletepet', { petId: 7, api_key: 'per-call' });
    expect(deleted.body.success).toBe(true);
    expect(petstore.lastHeaders().api_key).toBe('per-call');
    const gone = await call('petstore_getpetbyid', { petId: 7 });
    expect(gone.body.error.code).toBe('upstream_rejected');
    expect(gone.body.message).toContain('Pet not found');
  });

  it('takes a JSON string answer and a map answer as values', async () => {
    const login = await call('petstore_loginuser', { username: 'ada', password: 'secret' });
    expect(login.body.value).toBe('logged in user session: ada');
    expect(petstore.requests.at(-1)).toBe('GET /api/v3/user/login?username=ada&password=secret');
    const inventory = await call('petstore_getinventory');
    expect(inventory.body.success).toBe(true);
    expect(typeof inventory.body.value).toBe('object');
  });

  it('encodes path arguments as data: ../, %2F, ? and .. never change the path', async () => {
    for (const [username, sent] of [
      ['../store/inventory', '/api/v3/user/..%2Fstore%2Finventory'],
      ['..', '/api/v3/user/%2E%2E'],
      ['a%2Fb', '/api/v3/user/a%252Fb'],
      ['x?status=sold#frag', '/api/v3/user/x%3Fstatus%3Dsold%23frag'],
    ]) {
      const { body } = await call('petstore_getuserbyname', { username });
      expect(petstore.requests.at(-1)).toBe(`GET ${sent}`);
      expect(body.error.code).toBe('upstream_rejected');
      expect(body.message).toContain(`User not found: ${username}`);
    }
    expect((await call('petstore_getuserbyname', { username: 'user1' })).body.value.firstName).toBe('Ada');
  });

  it('refuses arguments that break the operation schema before any request', async () => {
    const before = petstore.requests.length;
    const { body } = await call('petstore_getpetbyid', { petId: '../../admin' });
    expect(body.error.code).toBe('invalid_arguments');
    expect(petstore.requests.length).toBe(before);
  });
});

describe('OpenAPI tools: bad sources stop the start', () => {
  async function startFailure(text: string): Promise<string> {
    const file = await toolsFile(`bad-${Math.random().toString(36).slice(2)}.yaml`, text);
    try {
      const other = await makeApp('memory', { env: { TOOLS_FILE: file } });
      await other.close();
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('expected the start to be refused');
  }

  it('refuses an include glob that matches no operation, listing the operations', async () => {
    const message = await startFailure(
      `openapi:\n  - {source: petstore, spec: ${PETSTORE_DOCUMENT}, base_url: "${petstore.url}/api/v3", include: [getPetById, getPetByIdd]}\n`,
    );
    expect(message).toMatch(/openapi\[0\] "petstore": include "getPetByIdd" matches no operation \(operations: [a-zA-Z, ]*getPetById, updatePetWithForm, /);
  });

  it('refuses a tools: override that names no included operation, a relative server without base_url, and a missing document', async () => {
    expect(
      await startFailure(`openapi:\n  - {source: petstore, spec: ${PETSTORE_DOCUMENT}, base_url: "http://x/api", tools: {getPet: {timeout_ms: 5}}}\n`),
    ).toMatch(/"petstore": tools\.getPet names no included operation/);
    expect(await startFailure(`openapi:\n  - {source: petstore, spec: ${PETSTORE_DOCUMENT}}\n`)).toMatch(
      /"petstore": base_url is needed: the document's server URL "\/v3" is relative/,
    );
    expect(await startFailure(`openapi:\n  - {source: petstore, spec: ./nowhere.yaml, base_url: "http://x/api"}\n`)).toMatch(
      /"petstore": spec \.\/nowhere\.yaml could not be read as OpenAPI: /,
    );
  });
});
