/**
 * The approval webhook (docs/approvals.md): every new approval and every decision is POSTed as the record's
 * JSON, signed `X-Toolport-Signature: sha256=<HMAC-SHA256 of the body>`, retried with backoff off
 * the call's path (a call never waits for it). A receiver that keeps failing loses the notice, not the call.
 */
import { createHmac } from 'node:crypto';
import type { Logger } from 'pino';
import { request } from 'undici';
import type { ApprovalRecord } from './record.ts';

const ATTEMPTS = 6;
const FIRST_DELAY_MS = 500;
const TIMEOUT_MS = 5_000;

export function signature(body: string, secret: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export class ApprovalWebhook {
  readonly #url: string;
  readonly #secret: string | null;
  readonly #log: Logger;
  readonly #timers = new Set<NodeJS.Timeout>();
  #closed = false;

  constructor(url: string, secret: string | null, log: Logger) {
    this.#url = url;
    this.#secret = secret;
    this.#log = log;
  }

  /** Sends the record in the background; returns at once. */
  readonly notify = (record: ApprovalRecord): void => {
    const body = JSON.stringify(record);
    const headers: Record<string, string> = { 'content-type': 'application/json', 'user-agent': 'toolport' };
    if (this.#secret !== null) headers['x-toolport-signature'] = signature(body, this.#secret);
    this.#schedule(body, headers, 1, 0);
  };

  #schedule(body: string, headers: Record<string, string>, attempt: number, delayMs: number): void {
    if (this.#closed) return;
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#send(body, headers, attempt);
    }, delayMs);
    timer.unref();
    this.#timers.add(timer);
  }

  async #send(body: string, headers: Record<string, string>, attempt: number): Promise<void> {
    let problem: string;
    try {
      const response = await request(this.#url, { method: 'POST', body, headers, headersTimeout: TIMEOUT_MS, bodyTimeout: TIMEOUT_MS });
      await response.body.dump();
      if (response.statusCode < 300) return;
      problem = `answered ${response.statusCode}`;
    } catch (err) {
      problem = err instanceof Error ? err.message : String(err);
    }
    if (attempt >= ATTEMPTS) {
      this.#log.warn({ url: this.#url, attempts: attempt, problem }, 'the approval webhook failed every attempt: this notice is dropped');
      return;
    }
    this.#schedule(body, headers, attempt + 1, FIRST_DELAY_MS * 2 ** (attempt - 1));
  }

  close(): void {
    this.#closed = true;
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
  }
}
