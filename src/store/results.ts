/**
 * Large results (docs/large-results.md): the whole content of a result whose `content` was cut, kept
 * RESULT_TTL_S for the caller that made the call. Each backend (memory/, redis/) keeps them alike.
 */
import { randomUUID } from 'node:crypto';
import type { Static } from 'typebox';
import type { resultRefSchema } from '../schemas.ts';

export interface KeptResult {
  /** A random UUID: the `<id>` of toolport://results/<id>. */
  readonly id: string;
  /** The API key id that made the call; null when the service is open. Only it may read the result. */
  readonly caller: string | null;
  readonly tool: string;
  readonly callId: string;
  /** The whole text the model would have seen, uncut. */
  readonly content: string;
  /** Epoch ms. */
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface ResultStore {
  /** Keeps the result until its `expiresAt`. */
  keep(result: KeptResult): Promise<void>;
  /** The result, or null once it expired (or never existed). */
  read(id: string): Promise<KeptResult | null>;
}

/** How a result names its kept whole (docs/large-results.md `result_ref`). */
export type ResultRef = Static<typeof resultRefSchema>;

/** What the pipeline needs to keep a cut result whole: the limit an answer cuts at, and the keeping. */
export type ResultKeeper = Pick<ResultResources, 'keep' | 'maxContentChars'>;

const RESULT_URI = /^toolport:\/\/results\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;
export const RESULT_ID_PATTERN = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';
export const RESULT_URI_PATTERN = '^toolport://results/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$';

export function resultRef(id: string, chars: number): ResultRef {
  return { uri: `toolport://results/${id}`, url: `/results/${id}`, chars };
}

/** The id in a toolport://results/<id> URI, or null when it is not one. */
export function resultIdOf(uri: string): string | null {
  return RESULT_URI.exec(uri)?.[1] ?? null;
}

/**
 * Large results as resources: kept with a fresh id for RESULT_TTL_S, and read back only by the
 * caller that made the call or an admin (anyone else, like an expired id, finds nothing).
 */
export class ResultResources {
  readonly #store: ResultStore;
  readonly #ttlMs: number;
  /** MAX_CONTENT_CHARS: a content longer than this (or than its tool's own limit) is cut, so its whole is kept. */
  readonly maxContentChars: number;

  constructor(store: ResultStore, ttlS: number, maxContentChars: number) {
    this.#store = store;
    this.#ttlMs = ttlS * 1000;
    this.maxContentChars = maxContentChars;
  }

  async keep(call: { caller: string | null; tool: string; callId: string; content: string }): Promise<ResultRef> {
    const id = randomUUID();
    const now = Date.now();
    await this.#store.keep({ id, ...call, createdAt: now, expiresAt: now + this.#ttlMs });
    return resultRef(id, call.content.length);
  }

  async read(id: string, caller: string | null, admin = false): Promise<KeptResult | null> {
    const kept = await this.#store.read(id);
    return kept !== null && (kept.caller === caller || admin) ? kept : null;
  }
}
