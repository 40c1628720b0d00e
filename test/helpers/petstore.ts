/**
 * A small implementation of the Swagger Petstore 3 API (test/fixtures/openapi/petstore3.yaml), in
 * memory, served under /api/v3 and /v3; it also serves the document itself at /openapi.yaml. Every
 * raw request line is kept, so tests can see exactly what toolport sent.
 */
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startNodeServer, type NodeServer } from './upstreams.ts';

export const PETSTORE_DOCUMENT = fileURLToPath(new URL('../fixtures/openapi/petstore3.yaml', import.meta.url));

interface Pet {
  id: number;
  name: string;
  photoUrls: string[];
  status?: string;
  tags?: { id?: number; name?: string }[];
  category?: { id?: number; name?: string };
}

export interface Petstore extends NodeServer {
  /** Every request as `METHOD raw-url`, oldest first. */
  requests: string[];
  /** The headers of the last request. */
  lastHeaders: () => IncomingMessage['headers'];
}

export async function startPetstore(): Promise<Petstore> {
  const pets = new Map<number, Pet>();
  const orders = new Map<number, Record<string, unknown>>();
  const users = new Map<string, Record<string, unknown>>([['user1', { id: 1, username: 'user1', firstName: 'Ada', userStatus: 1 }]]);
  const requests: string[] = [];
  let lastHeaders: IncomingMessage['headers'] = {};
  const document = readFileSync(PETSTORE_DOCUMENT, 'utf8');

  const send = (res: ServerResponse, status: number, body?: unknown): void => {
    if (body === undefined) return void res.writeHead(status).end();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const problem = (res: ServerResponse, status: number, detail: string): void =>
    void res.writeHead(status, { 'content-type': 'application/problem+json' }).end(JSON.stringify({ title: detail, status, detail }));

  function route(method: string, path: string, query: URLSearchParams, body: unknown, res: ServerResponse): void {
    const segments = path.split('/').slice(1).map(decodeURIComponent);
    const [first, second, third] = segments;
    if (first === 'pet' && segments.length === 1 && (method === 'POST' || method === 'PUT')) {
      const pet = body as Pet;
      if (typeof pet?.name !== 'string' || !Array.isArray(pet.photoUrls)) return problem(res, 400, 'Invalid input');
      if (method === 'PUT' && !pets.has(pet.id)) return problem(res, 404, 'Pet not found');
      const id = pet.id ?? pets.size + 1;
      pets.set(id, { ...pet, id });
      return send(res, 200, pets.get(id));
    }
    if (first === 'pet' && second === 'findByStatus' && method === 'GET') {
      const status = query.get('status') ?? 'available';
      return send(
        res,
        200,
        [...pets.values()].filter((p) => p.status === status),
      );
    }
    if (first === 'pet' && second === 'findByTags' && method === 'GET') {
      const tags = query.getAll('tags');
      return send(
        res,
        200,
        [...pets.values()].filter((p) => p.tags?.some((t) => tags.includes(String(t.name)))),
      );
    }
    if (first === 'pet' && second !== undefined && third === undefined) {
      if (!/^\d+$/.test(second)) return problem(res, 400, 'Invalid ID supplied');
      const id = Number(second);
      if (method === 'GET') return pets.has(id) ? send(res, 200, pets.get(id)) : problem(res, 404, 'Pet not found');
      if (method === 'DELETE') return pets.delete(id) ? send(res, 200) : problem(res, 400, 'Invalid pet value');
      if (method === 'POST') {
        const pet = pets.get(id);
        if (pet === undefined) return problem(res, 400, 'Invalid input');
        if (query.has('name')) pet.name = query.get('name')!;
        if (query.has('status')) pet.status = query.get('status')!;
        return send(res, 200, pet);
      }
    }
    if (first === 'store' && second === 'inventory' && method === 'GET') {
      const counts: Record<string, number> = {};
      for (const pet of pets.values()) counts[pet.status ?? 'none'] = (counts[pet.status ?? 'none'] ?? 0) + 1;
      return send(res, 200, counts);
    }
    if (first === 'store' && second === 'order' && third === undefined && method === 'POST') {
      const order = { ...(body as Record<string, unknown>), id: (body as { id?: number })?.id ?? orders.size + 1 };
      orders.set(order.id as number, order);
      return send(res, 200, order);
    }
    if (first === 'store' && second === 'order' && third !== undefined) {
      const order = orders.get(Number(third));
      if (method === 'GET') return order ? send(res, 200, order) : problem(res, 404, 'Order not found');
      if (method === 'DELETE') return orders.delete(Number(third)) ? send(res, 200) : problem(res, 404, 'Order not found');
    }
    if (first === 'user' && second === 'login' && method === 'GET') {
      return query.get('password') === 'secret'
        ? send(res, 200, `logged in user session: ${query.get('username')}`)
        : problem(res, 400, 'Invalid username/password supplied');
    }
    if (first === 'user' && second !== undefined && segments.length === 2) {
      if (method === 'GET') return users.has(second) ? send(res, 200, users.get(second)) : problem(res, 404, `User not found: ${second}`);
    }
    return problem(res, 404, `no route ${method} ${path}`);
  }

  const server = await startNodeServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    lastHeaders = req.headers;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = req.url ?? '/';
      if (url === '/openapi.yaml') return void res.writeHead(200, { 'content-type': 'application/yaml' }).end(document);
      const [rawPath = '/', search = ''] = url.split('?', 2) as [string, string?];
      const prefix = ['/api/v3', '/v3'].find((p) => rawPath.startsWith(`${p}/`));
      if (prefix === undefined) return problem(res, 404, 'not under /api/v3');
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        return problem(res, 400, 'the body is not JSON');
      }
      route(req.method ?? 'GET', rawPath.slice(prefix.length), new URLSearchParams(search), body, res);
    });
  });
  return Object.assign(server, { requests, lastHeaders: () => lastHeaders });
}
