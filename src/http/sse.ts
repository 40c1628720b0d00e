/**
 * A reply that turns into a Server-Sent Events stream on its first event. Until then the route can
 * still answer plain JSON (or a problem), so a call that reports no progress costs nothing extra.
 */
import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Whether the client lists text/event-stream in Accept. */
export function acceptsEventStream(request: FastifyRequest): boolean {
  const accept = request.headers.accept;
  return typeof accept === 'string' && accept.includes('text/event-stream');
}

export class EventStreamReply {
  readonly #request: FastifyRequest;
  readonly #reply: FastifyReply;
  #open = false;

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.#request = request;
    this.#reply = reply;
  }

  get open(): boolean {
    return this.#open;
  }

  /** Writes one event (opening the stream first); `data` is sent as one line of JSON. */
  event(name: string, data: unknown): void {
    this.events(name, [JSON.stringify(data)]);
  }

  /** Writes one event per JSON text (each one line), in one write. */
  events(name: string, jsonTexts: readonly string[]): void {
    const raw = this.#reply.raw;
    if (!this.#open) {
      this.#open = true;
      this.#reply.hijack();
      raw.writeHead(200, {
        ...(this.#reply.getHeaders() as OutgoingHttpHeaders), // what hooks set before the stream began (CORS)
        'content-type': 'text/event-stream',
        'cache-control': 'no-cache',
        'x-request-id': String(this.#request.id),
      });
    }
    // A client that went away has cancelled the call; what is left to say goes nowhere.
    if (raw.writableEnded || raw.destroyed || jsonTexts.length === 0) return;
    let text = '';
    for (const json of jsonTexts) text += `event: ${name}\ndata: ${json}\n\n`;
    raw.write(text);
  }

  /** Ends an open stream; the route must not answer by other means after `open` became true. */
  end(): void {
    if (this.#open && !this.#reply.raw.writableEnded && !this.#reply.raw.destroyed) this.#reply.raw.end();
  }
}
