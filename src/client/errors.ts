/** What the client throws: a request the service refused (a 4xx problem), or a service it could not reach. */

/** An RFC 9457 problem as the service answers it. */
export interface Problem {
  type?: string;
  title?: string;
  status: number;
  detail?: string;
  [member: string]: unknown;
}

/** The service refused the request (4xx): `status` and the problem's `detail` say why; retrying the same request does not help. */
export class ToolportProblemError extends Error {
  override name = 'ToolportProblemError';
  readonly status: number;
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(`${problem.status} ${problem.title ?? 'refused'}${problem.detail ? `: ${problem.detail}` : ''}`);
    this.status = problem.status;
    this.problem = problem;
  }
}

/** 400: the body or a parameter is wrong. */
export class BadRequestError extends ToolportProblemError {
  override name = 'BadRequestError';
}
/** 401: no API key, or one the service does not know. */
export class UnauthorizedError extends ToolportProblemError {
  override name = 'UnauthorizedError';
}
/** 403: the key may not do this. */
export class ForbiddenError extends ToolportProblemError {
  override name = 'ForbiddenError';
}
/** 404: no such route, task, result or approval (for this key). */
export class NotFoundError extends ToolportProblemError {
  override name = 'NotFoundError';
}
/** 409: the same Idempotency-Key is still in flight, or the approval is already decided. */
export class ConflictError extends ToolportProblemError {
  override name = 'ConflictError';
}
/** 422: the Idempotency-Key was used before with other arguments. */
export class UnprocessableError extends ToolportProblemError {
  override name = 'UnprocessableError';
}
/** 429: over the key's rate limit. */
export class RateLimitedError extends ToolportProblemError {
  override name = 'RateLimitedError';
}

const BY_STATUS: Record<number, new (problem: Problem) => ToolportProblemError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  422: UnprocessableError,
  429: RateLimitedError,
};

export function problemError(problem: Problem): ToolportProblemError {
  return new (BY_STATUS[problem.status] ?? ToolportProblemError)(problem);
}

/** The service did not answer, or answered 5xx, on every attempt. */
export class ToolportUnavailableError extends Error {
  override name = 'ToolportUnavailableError';
  /** The last status seen, or null when no answer came. */
  readonly status: number | null;

  constructor(message: string, status: number | null, options?: { cause?: unknown }) {
    super(message, options);
    this.status = status;
  }
}
