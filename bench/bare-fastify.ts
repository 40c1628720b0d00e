// Baseline for the benchmark: the cheapest possible Fastify 5 JSON round trip,
// so toolport's numbers can be read as a ratio to "Fastify itself".
import Fastify from 'fastify';

const app = Fastify({ logger: false });

app.post('/echo', async (request) => request.body);

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
