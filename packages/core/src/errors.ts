/**
 * The codes of a platform's errors during a sync (spec "Errors → Sync errors"), which PlatformError carries and a
 * sync job records. The API answers platform failures with its own codes (docs/errors.md), so these statuses apply
 * only to one that reached an HTTP handler unmapped: the platform is upstream (502), a channel it does not show 404.
 */
export const SYNC_ERROR_STATUS = {
  PLATFORM_ERROR: 502,
  AUTH_ERROR: 502,
  RATE_LIMIT: 502,
  CHANNEL_NOT_FOUND: 404,
} as const;

/** Codes of spec "Errors → Sync errors": SYNC_ERROR_STATUS's, and INTERNAL_ERROR (500) for anything else. */
export type SyncErrorCode = keyof typeof SYNC_ERROR_STATUS | 'INTERNAL_ERROR';

/**
 * One error type for the whole service (ARCHITECTURE.md "Cross-cutting").
 * `code` picks the HTTP status through ERROR_STATUS; `retriable` is the only thing retriers read.
 */
export const ERROR_STATUS = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMIT_EXCEEDED: 429,
  REQUEST_HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  STORE_UNAVAILABLE: 503,
  PROVIDER_UNAVAILABLE: 503,
  IMPORT_FAILED: 422,
  DATA_DIR_LOCKED: 423,
  ...SYNC_ERROR_STATUS,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface AtlasErrorOptions {
  retriable?: boolean;
  details?: Record<string, unknown>;
  cause?: unknown;
  /**
   * The message and details were written for the caller and quote no internals (no store address, SQL, driver text):
   * an HTTP 5xx shows them. Default: true below 500, false from 500 (the caller then sees a fixed message per code
   * and the request id; the error itself goes to the log).
   */
  expose?: boolean;
}

export class AtlasError extends Error {
  readonly retriable: boolean;
  readonly details: Record<string, unknown> | undefined;
  /** See AtlasErrorOptions.expose. */
  readonly expose: boolean;

  constructor(
    readonly code: ErrorCode,
    message: string,
    opts: AtlasErrorOptions = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'AtlasError';
    this.retriable = opts.retriable ?? false;
    this.details = opts.details;
    this.expose = opts.expose ?? ERROR_STATUS[code] < 500;
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
