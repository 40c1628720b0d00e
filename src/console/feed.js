// The live call feed: one stream of GET /calls/stream for the whole page, reconnecting with a
// growing pause; pages listen for `call` events and `status` changes.
import { readEventStream } from './api.js';

const KEEP_IDS = 2000;

export class CallFeed extends EventTarget {
  #ids = new Set();
  #abort = null;
  #retryMs = 1000;
  status = 'connecting';
  /** Entries seen so far, oldest first (bounded). */
  entries = [];

  start() {
    if (this.#abort) return;
    this.#abort = new AbortController();
    void this.#run(this.#abort.signal);
  }

  stop() {
    this.#abort?.abort();
    this.#abort = null;
  }

  async #run(signal) {
    while (!signal.aborted) {
      this.#setStatus('connecting');
      try {
        await readEventStream('/calls/stream?limit=200', (name, data) => this.#onEvent(name, data), signal);
      } catch (err) {
        if (signal.aborted) return;
        if (err.status === 401 || err.status === 403) {
          this.#setStatus('refused');
          return;
        }
      }
      if (signal.aborted) return;
      this.#setStatus('offline');
      await new Promise((resolve) => setTimeout(resolve, this.#retryMs));
      this.#retryMs = Math.min(this.#retryMs * 2, 10_000);
    }
  }

  #onEvent(name, data) {
    if (name === 'ready') {
      this.#retryMs = 1000;
      this.#setStatus('live');
      return;
    }
    if (name !== 'call' || this.#ids.has(data.id)) return;
    this.#ids.add(data.id);
    if (this.#ids.size > KEEP_IDS) this.#ids.delete(this.#ids.values().next().value);
    this.entries.push(data);
    if (this.entries.length > KEEP_IDS) this.entries.shift();
    this.dispatchEvent(new CustomEvent('call', { detail: data }));
  }

  #setStatus(status) {
    if (this.status === status) return;
    this.status = status;
    this.dispatchEvent(new CustomEvent('status', { detail: status }));
  }
}
