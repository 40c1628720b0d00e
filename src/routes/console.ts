/**
 * GET /console: the console page and its assets (docs/console.md), read from src/console/ once at start and
 * served from memory. They hold no data and need no API key (docs/operations.md); the page asks for one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { NotFound } from '../errors.ts';
import { compressLargeAnswers } from '../http/compress.ts';

const ASSETS = new URL('../console/', import.meta.url);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
/** Scripts and styles from this origin only; data from this origin only. */
const POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

interface Asset {
  type: string;
  body: Buffer;
}

function readAssets(): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(ASSETS)) {
    const type = TYPES[path.extname(name)];
    if (type !== undefined) assets.set(name, { type, body: readFileSync(new URL(name, ASSETS)) });
  }
  return assets;
}

function send(reply: FastifyReply, asset: Asset): FastifyReply {
  return reply
    .type(asset.type)
    .header('cache-control', 'no-cache')
    .header('content-security-policy', POLICY)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .send(asset.body);
}

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  await compressLargeAnswers(app);
  const assets = readAssets();
  const page = assets.get('index.html');
  if (page === undefined) throw new Error('the console page (src/console/index.html) is missing');
  // No key needed (src/http/auth.ts isKeyOptional): the page asks for one in the browser.
  app.get('/console', { schema: { hide: true } }, async (_request, reply) => send(reply, page));
  app.get<{ Params: { asset: string } }>('/console/:asset', { schema: { hide: true } }, async (request, reply) => {
    const asset = request.params.asset === 'index.html' ? undefined : assets.get(request.params.asset);
    if (asset === undefined) throw new NotFound(`the console has no file "${request.params.asset.slice(0, 64)}"`);
    return send(reply, asset);
  });
}
