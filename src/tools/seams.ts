/** The Idempotency-Key conflicts the ledger stage throws for the HTTP edge to answer (409, 422). */

/** 409: a call holding the same Idempotency-Key is still running. */
export class IdempotencyKeyInFlightError extends Error {
  override name = 'IdempotencyKeyInFlightError';
  constructor(readonly retryAfterS: number) {
    super('a call with this Idempotency-Key is still running; retry after it finishes');
  }
}

/** 422: the Idempotency-Key was first used with other arguments. */
export class IdempotencyKeyReusedError extends Error {
  override name = 'IdempotencyKeyReusedError';
  constructor() {
    super('this Idempotency-Key was used with other arguments; use a new key for a new payload');
  }
}
