// Baseline for the benchmark: the cheapest possible Fastify 5 JSON round trip,
// so toolport's numbers can be read as a ratio to "Fastify itself".
// POST /floor is the floor of toolport's own edge: the same body parsed, and the same answer bytes
// and headers a native call of the bench's echo tool sends (a request id, the answer as JSON), with
// none of toolport's hooks or work in between.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';

const app = Fastify({ logger: false });

app.post('/echo', async (request) => request.body);

/** A native answer of `echo` as toolport sends it (its id and duration vary per call; their lengths do not). */
const ANSWER = JSON.stringify({
  id: 'call_366391f2-e3bd-4785-a517-3aecac5592fe',
  name: 'echo',
  success: true,
  message: 'echoed',
  value: { text: 'hi' },
  exclude_value_from_context: false,
  error: null,
  content: 'echoed\n\n{"text":"hi"}',
  tool_message: { message: 'echoed', value: { text: 'hi' }, success: true, exclude_value_from_context: false },
  replayed: false,
  effect_id: null,
  idempotency_key: null,
  tool_hash: '216b1018fc5c2c4aba635789b2e63d50ecafba687dc13bd58d56d0c25aef5484',
  duration_ms: 0.986,
});

app.post('/floor', async (request, reply) => {
  if (typeof request.body !== 'object' || request.body === null) return reply.code(400).send();
  return reply.header('x-request-id', randomUUID()).type('application/json').send(ANSWER);
});

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
