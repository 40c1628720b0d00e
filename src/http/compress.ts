/**
 * Compression of large answers (@fastify/compress: brotli or gzip, as the client accepts, above
 * 1 KiB). Registered inside the route modules that can answer large bodies — the catalog, search,
 * the console's files — so that its hooks are on their routes only, never on the call path.
 */
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';

export async function compressLargeAnswers(app: FastifyInstance): Promise<void> {
  await app.register(compress, { threshold: 1024, encodings: ['br', 'gzip'] });
}
