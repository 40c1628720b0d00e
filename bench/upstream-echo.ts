// The upstream of the HTTP tool benchmark: a plain Node HTTP server answering POST /echo with the
// JSON it received as `value` (a 2xx JSON answer, as most tool servers give). Its own process, so
// its CPU is not counted as toolport's.
import { createServer } from 'node:http';

const port = Number(process.env.PORT ?? 0);
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8') || '{}';
    const answer = `{"text":${JSON.stringify((JSON.parse(body) as { text?: string }).text ?? '')}}`;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(answer) }).end(answer);
  });
});
server.keepAliveTimeout = 30_000;
server.listen(port, '127.0.0.1');
