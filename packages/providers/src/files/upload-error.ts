import { AtlasError, ERROR_STATUS } from '@atlas/core';

/**
 * HTTP status of each upload error code (spec "Ask", `POST /api/ask/upload`, and "Limits"): the upload codes of
 * `@atlas/core`'s ERROR_STATUS.
 */
export const UPLOAD_ERROR_STATUS = {
  INVALID_REQUEST: ERROR_STATUS.INVALID_REQUEST,
  PAYLOAD_TOO_LARGE: ERROR_STATUS.PAYLOAD_TOO_LARGE,
  UNSUPPORTED_MEDIA_TYPE: ERROR_STATUS.UNSUPPORTED_MEDIA_TYPE,
} as const;

/** `INVALID_REQUEST` (400: empty, damaged, password-protected, bad base64), `PAYLOAD_TOO_LARGE` (413), `UNSUPPORTED_MEDIA_TYPE` (415). */
export type UploadErrorCode = keyof typeof UPLOAD_ERROR_STATUS;

/** What an UploadError carries for the error body's `details`: the file, and the limit or the allowed types broken. */
export interface UploadErrorDetails {
  name: string;
  content_type?: string;
  bytes?: number;
  max_bytes?: number;
  allowed_types?: readonly string[];
  [key: string]: unknown;
}

/**
 * Why an uploaded or attached file was refused: an AtlasError (never retriable) whose `status` is the one the route
 * answers, with `{error: {code, message, details}}` (the shape of `errorBody` in `@atlas/core`); `statusCode` mirrors
 * `status` so a Fastify error handler that reads it picks the same status. The message names the file and the limit
 * or the allowed types.
 */
export class UploadError extends AtlasError {
  declare readonly code: UploadErrorCode;
  declare readonly details: UploadErrorDetails;

  constructor(code: UploadErrorCode, message: string, details: UploadErrorDetails, opts: { cause?: unknown } = {}) {
    super(code, message, { details, cause: opts.cause });
    this.name = 'UploadError';
  }

  override get status(): (typeof UPLOAD_ERROR_STATUS)[UploadErrorCode] {
    return UPLOAD_ERROR_STATUS[this.code];
  }

  get statusCode(): number {
    return this.status;
  }
}

/** The file name as messages show it: quoted, control characters dropped, at most 120 characters. */
export const quoteName = (name: string): string => {
  const clean = Array.from(name)
    .filter((ch) => ch >= ' ' && ch !== '\u007f')
    .join('');
  return JSON.stringify(clean.length > 120 ? `${clean.slice(0, 119)}…` : clean || '(unnamed)');
};
