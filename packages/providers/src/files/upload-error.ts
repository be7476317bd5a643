/**
 * HTTP status of each upload error code (spec "Ask", `POST /api/ask/upload`, and "Limits").
 * `UNSUPPORTED_MEDIA_TYPE` is not an `ErrorCode` of `@atlas/core`'s AtlasError, hence this separate class.
 */
export const UPLOAD_ERROR_STATUS = {
  INVALID_REQUEST: 400,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
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
 * Why an uploaded or attached file was refused. The route answers
 * `status` with `{error: {code, message, details}}` (the shape of `errorBody` in `@atlas/core`);
 * `statusCode` mirrors `status` so a Fastify error handler that reads it picks the same status.
 * The message names the file and the limit or the allowed types.
 */
export class UploadError extends Error {
  readonly status: (typeof UPLOAD_ERROR_STATUS)[UploadErrorCode];

  constructor(
    readonly code: UploadErrorCode,
    message: string,
    readonly details: UploadErrorDetails,
    opts: { cause?: unknown } = {},
  ) {
    super(message, { cause: opts.cause });
    this.name = 'UploadError';
    this.status = UPLOAD_ERROR_STATUS[code];
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
