/**
 * One SSE stream of the Streamable HTTP transport (http-transport.ts): a POST's answer, the GET
 * stream of the server's own messages, or a resumed POST stream. Each message is handed on as it
 * arrives; at its end the transport learns whether the stream carried its answer and the last event
 * id, to resume it. A class, not closures: under tsx every named closure made per call also costs a
 * `defineProperty` of its name.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceMessage, type EventSourceParser } from 'eventsource-parser';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isMessage, type SseReader, type StreamOptions } from './http-answer.ts';

/** What a stream tells its transport. */
export interface StreamSink {
  /** `call`: the progress token of the tools/call whose stream carried it. */
  message(message: JSONRPCMessage, call: string | undefined): void;
  error(error: Error): void;
  /** The server's `retry:`. */
  retry(ms: number): void;
  /** The stream ended, or broke with `err`. */
  ended(stream: SseStream, err: Error | undefined): void;
}

export class SseStream implements SseReader {
  /** Ends the stream when the transport closes. */
  readonly open: { destroy(): void };
  readonly options: StreamOptions;
  /** The last event id the server gave, to resume the stream from. */
  lastEventId: string | undefined;
  /** The stream carried the answer to its request. */
  answered = false;
  readonly #sink: StreamSink;
  // undici gives Buffers; a character cut between two of them is joined here.
  readonly #decoder = new StringDecoder('utf8');
  readonly #parser: EventSourceParser;
  #done = false;

  constructor(sink: StreamSink, open: { destroy(): void }, options: StreamOptions) {
    this.#sink = sink;
    this.open = open;
    this.options = options;
    this.#parser = createParser({ onEvent: this.#event.bind(this), onRetry: sink.retry });
  }

  feed(chunk: Buffer): void {
    this.#parser.feed(this.#decoder.write(chunk));
  }

  finish(err?: Error): void {
    if (this.#done) return;
    this.#done = true;
    this.#sink.ended(this, err);
  }

  #event(event: EventSourceMessage): void {
    if (event.id !== undefined && event.id !== '') this.lastEventId = event.id;
    if (event.data === '' || (event.event !== undefined && event.event !== 'message')) return;
    let message: unknown;
    try {
      message = JSON.parse(event.data);
    } catch (err) {
      this.#sink.error(new Error(`the server sent an event that is not JSON: ${(err as Error).message}`));
      return;
    }
    if (!isMessage(message)) {
      this.#sink.error(new Error('the server sent an event that is not a JSON-RPC message'));
      return;
    }
    if ('id' in message && ('result' in message || 'error' in message)) {
      this.answered = true;
      if (this.options.replayId !== undefined) message.id = this.options.replayId;
    }
    this.#sink.message(message, this.options.call);
  }
}
