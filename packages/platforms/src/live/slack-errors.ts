import { ErrorCode } from '@slack/web-api';
import { isObj, str } from '../json.js';
import { PlatformError, type ValidationErrorCode, type ValidationResult } from './types.js';

/** What a failed Slack Web API call means, read from the @slack/web-api error classes (research note §1, §4). */
interface SlackFailure {
  kind: 'auth' | 'expired' | 'scope' | 'ratelimit' | 'network' | 'server' | 'not_found' | 'no_access' | 'other';
  platformCode: string;
  retryAfter?: number;
  needed?: string[];
  status?: number;
}

const AUTH = new Set(['invalid_auth', 'not_authed', 'account_inactive', 'token_revoked', 'not_allowed_token_type']);
const SERVER = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);
const NOT_FOUND = new Set(['channel_not_found', 'thread_not_found']);

const csv = (v: unknown): string[] =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean)
    : [];

/** Classifies any error thrown by a WebClient call. */
export function classifySlack(err: unknown): SlackFailure {
  const e = err as { code?: unknown; data?: unknown; retryAfter?: unknown; statusCode?: unknown; message?: unknown };
  if (e?.code === ErrorCode.PlatformError && isObj(e.data)) {
    const code = str(e.data, 'error') ?? 'unknown_error';
    if (code === 'token_expired') return { kind: 'expired', platformCode: code };
    if (AUTH.has(code)) return { kind: 'auth', platformCode: code };
    if (code === 'missing_scope') return { kind: 'scope', platformCode: code, needed: csv(e.data.needed) };
    if (code === 'ratelimited') return { kind: 'ratelimit', platformCode: code };
    if (SERVER.has(code)) return { kind: 'server', platformCode: code };
    if (NOT_FOUND.has(code)) return { kind: 'not_found', platformCode: code };
    if (code === 'not_in_channel') return { kind: 'no_access', platformCode: code };
    return { kind: 'other', platformCode: code };
  }
  if (e?.code === ErrorCode.RateLimitedError) {
    return { kind: 'ratelimit', platformCode: 'ratelimited', retryAfter: Number(e.retryAfter) };
  }
  if (e?.code === ErrorCode.HTTPError) {
    const status = Number(e.statusCode);
    return { kind: status >= 500 ? 'server' : 'other', platformCode: `http_${status}`, status };
  }
  if (e?.code === ErrorCode.RequestError) return { kind: 'network', platformCode: 'request_error' };
  // A 429 without a numeric Retry-After is rejected by the SDK with a plain Error (research note §4).
  if (typeof e?.message === 'string' && e.message.includes('Retry header')) {
    return { kind: 'ratelimit', platformCode: 'ratelimited' };
  }
  return { kind: 'other', platformCode: 'unknown_error' };
}

const VALIDATION: Record<SlackFailure['kind'], ValidationErrorCode> = {
  auth: 'INVALID_CREDENTIALS',
  expired: 'AUTH_EXPIRED',
  scope: 'INSUFFICIENT_PERMISSIONS',
  ratelimit: 'RATE_LIMITED',
  network: 'NETWORK_ERROR',
  server: 'PLATFORM_ERROR',
  not_found: 'PLATFORM_ERROR',
  no_access: 'PLATFORM_ERROR',
  other: 'PLATFORM_ERROR',
};

/** Maps a failed auth.test to a validation failure (spec "Connection validation errors"). */
export function slackValidationFailure(err: unknown, requiredScopes: readonly string[]): ValidationResult {
  const f = classifySlack(err);
  const code = VALIDATION[f.kind];
  const message =
    f.kind === 'network'
      ? 'cannot reach the Slack API'
      : f.kind === 'ratelimit'
        ? 'Slack rate limit reached; retry later'
        : `Slack rejected the credentials check: ${f.platformCode}`;
  return {
    valid: false,
    error: {
      code,
      message,
      ...(code === 'INSUFFICIENT_PERMISSIONS'
        ? { required_scopes: f.needed?.length ? f.needed : [...requiredScopes] }
        : {}),
      ...(code === 'RATE_LIMITED' ? { retry_after: Math.max(1, Math.ceil(f.retryAfter ?? 1)) } : {}),
    },
  };
}

/**
 * Maps a failed sync-side call to PlatformError (spec "Sync errors"): auth failures and missing scopes → AUTH_ERROR;
 * unknown channel/thread and `not_in_channel` → CHANNEL_NOT_FOUND; ratelimited → RATE_LIMIT (retriable);
 * 5xx, Slack internal errors and network failures → PLATFORM_ERROR (retriable); anything else → PLATFORM_ERROR.
 */
export function slackPlatformError(err: unknown, call: string): PlatformError {
  const f = classifySlack(err);
  const base = { platformCode: f.platformCode, ...(f.status !== undefined ? { status: f.status } : {}) };
  switch (f.kind) {
    case 'auth':
    case 'expired':
      return new PlatformError('AUTH_ERROR', `Slack ${call}: authentication failed (${f.platformCode})`, {
        retriable: false,
        ...base,
      });
    case 'scope':
      return new PlatformError('AUTH_ERROR', `Slack ${call}: missing scope ${f.needed?.join(',') ?? ''}`.trim(), {
        retriable: false,
        ...base,
      });
    case 'ratelimit':
      return new PlatformError('RATE_LIMIT', `Slack ${call}: rate limited`, {
        retriable: true,
        ...(f.retryAfter !== undefined && Number.isFinite(f.retryAfter) ? { retryAfter: f.retryAfter } : {}),
        ...base,
      });
    case 'not_found':
    case 'no_access':
      return new PlatformError('CHANNEL_NOT_FOUND', `Slack ${call}: ${f.platformCode}`, { retriable: false, ...base });
    case 'network':
      return new PlatformError('PLATFORM_ERROR', `Slack ${call}: network error`, { retriable: true, ...base });
    case 'server':
      return new PlatformError('PLATFORM_ERROR', `Slack ${call}: server error (${f.platformCode})`, {
        retriable: true,
        ...base,
      });
    default:
      return new PlatformError('PLATFORM_ERROR', `Slack ${call}: ${f.platformCode}`, { retriable: false, ...base });
  }
}
