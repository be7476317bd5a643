import createClient, { type Middleware } from 'openapi-fetch';
import { readKey } from './key';
import type { components, paths } from './schema';

/** The shared error body of every Atlas error (spec "Errors"): `{"error": {"code", "message", "details"}}`. */
export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/**
 * An answer of the API that is not a success: its HTTP status, the error body's code and message, and for 429 the
 * seconds to wait (the Retry-After header). Thrown by `unwrap` and the ask stream; screens show `message` and, for
 * 429, a countdown.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown = null,
    readonly retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Adds the stored API key (key.ts) to every request as `Authorization: Bearer <key>`; none on the open default. */
const withKey: Middleware = {
  onRequest({ request }) {
    const key = readKey();
    if (key) request.headers.set('authorization', `Bearer ${key}`);
    return request;
  },
};

/** The typed API client: paths, parameters, bodies and answers from the served OpenAPI document (schema.d.ts). */
export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(withKey);

/** The ApiError for a failed response: the shared error body when there is one, else the status text. */
export const errorOf = async (res: Response, body?: unknown): Promise<ApiError> => {
  let parsed = body;
  if (parsed === undefined) {
    try {
      parsed = await res.clone().json();
    } catch {
      parsed = null;
    }
  }
  const e = (parsed as Partial<ErrorBody> | null)?.error;
  const retry = Number(res.headers.get('retry-after'));
  return new ApiError(
    res.status,
    e?.code ?? (res.status === 429 ? 'RATE_LIMIT_EXCEEDED' : 'HTTP_ERROR'),
    e?.message ?? `${res.status} ${res.statusText}`,
    e?.details ?? null,
    Number.isFinite(retry) && retry > 0 ? retry : null,
  );
};

/**
 * The data of an openapi-fetch result, or its ApiError thrown: `await unwrap(api.GET('/api/channels'))`.
 */
export const unwrap = async <T>(p: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> => {
  const r = await p;
  if (!r.response.ok) throw await errorOf(r.response, r.error);
  return r.data as T;
};

export type Schemas = components extends { schemas: infer S } ? S : never;
