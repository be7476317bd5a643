/**
 * One error type for the whole service (ARCHITECTURE.md "Cross-cutting").
 * `code` picks the HTTP status through ERROR_STATUS; `retriable` is the only thing retriers read.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMIT_EXCEEDED: 429,
  INTERNAL_ERROR: 500,
  STORE_UNAVAILABLE: 503,
  PROVIDER_UNAVAILABLE: 503,
  IMPORT_FAILED: 422,
  DATA_DIR_LOCKED: 423,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AtlasErrorOptions {
  retriable?: boolean;
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class AtlasError extends Error {
  readonly retriable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: AtlasErrorOptions = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AtlasError';
    this.retriable = opts.retriable ?? false;
    this.details = opts.details;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** The shared error body of every HTTP failure: `{error: {code, message, details?}}`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

export const errorBody = (code: string, message: string, details?: Record<string, unknown>): ErrorBody => ({
  error: details === undefined ? { code, message } : { code, message, details },
});

export const notFound = (what: string, id: string): AtlasError =>
  new AtlasError('NOT_FOUND', `${what} '${id}' was not found`, { details: { id } });

/** True when `err` says it may succeed on a later attempt. */
export const isRetriable = (err: unknown): boolean => err instanceof AtlasError && err.retriable;
