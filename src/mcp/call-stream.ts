/**
 * The answer of one tools/call over Streamable HTTP: plain JSON, or an SSE stream once the call has
 * something to send before its result — progress notifications (when the client sent a
 * progressToken) or a request to the client (elicitation/create). A call that sends nothing early
 * costs nothing extra.
 */
import { ProgressThrottle } from '../tools/progress.ts';
import type { RequestEnv } from './endpoint.ts';
import { metaOf, type JsonRpcRequest, type JsonRpcResponse } from './protocol.ts';

/** A reply that turns into an SSE stream on its first event (the route's EventStreamReply). */
export interface EventSink {
  readonly open: boolean;
  event(name: string, data: unknown): void;
  end(): void;
}

export class CallStream {
  readonly #stream: EventSink;
  #throttle: ProgressThrottle | null = null;

  /** Wires the request's `env` to the stream: progress reports (with a progressToken) and requests to the client. */
  constructor(stream: EventSink, message: JsonRpcRequest, env: RequestEnv) {
    this.#stream = stream;
    const token = metaOf(message.params)?.progressToken;
    if (typeof token === 'string' || typeof token === 'number') {
      const throttle = (this.#throttle = new ProgressThrottle(({ done, total }) =>
        stream.event('message', {
          jsonrpc: '2.0',
          method: 'notifications/progress',
          params: { progressToken: token, progress: done, ...(total !== undefined && { total }) },
        }),
      ));
      env.progress = (_callId, done, total) => throttle.report(done, total);
    }
    env.ask = (ask) => stream.event('message', ask);
  }

  /** Whether the stream has opened: the answer must then go down it. */
  get open(): boolean {
    return this.#stream.open;
  }

  /** Sends what progress is held back and stops reporting (the call has ended). */
  settle(): void {
    this.#throttle?.flush();
    this.#throttle?.close();
  }

  /** The call's answer as the stream's last event. */
  end(response: JsonRpcResponse): void {
    this.#stream.event('message', response);
    this.#stream.end();
  }
}
