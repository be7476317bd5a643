import { DiscordAPIError, HTTPError, RateLimitError } from '@discordjs/rest';
import { PlatformError, type ValidationResult } from './types.js';

/** What a failed @discordjs/rest call means (research note §7, §10). `retryAfter` in seconds. */
interface DiscordFailure {
  kind:
    | 'auth'
    | 'no_access'
    | 'unknown_channel'
    | 'unknown_guild'
    | 'not_found'
    | 'ratelimit'
    | 'server'
    | 'network'
    | 'other';
  platformCode: string;
  status?: number;
  retryAfter?: number;
}

/** Classifies any error thrown by a REST call. */
export function classifyDiscord(err: unknown): DiscordFailure {
  if (err instanceof RateLimitError) {
    return { kind: 'ratelimit', platformCode: 'rate_limited', status: 429, retryAfter: err.retryAfter / 1000 };
  }
  if (err instanceof DiscordAPIError) {
    const code = String(err.code);
    const base = { platformCode: code, status: err.status };
    if (err.status === 401) return { kind: 'auth', ...base };
    if (err.status === 403) return { kind: 'no_access', ...base };
    if (code === '10003') return { kind: 'unknown_channel', ...base };
    if (code === '10004') return { kind: 'unknown_guild', ...base };
    if (err.status === 404) return { kind: 'not_found', ...base };
    if (err.status === 429) return { kind: 'ratelimit', ...base };
    return { kind: err.status >= 500 ? 'server' : 'other', ...base };
  }
  if (err instanceof HTTPError) {
    return { kind: err.status >= 500 ? 'server' : 'other', platformCode: `http_${err.status}`, status: err.status };
  }
  return { kind: 'network', platformCode: 'network_error' };
}

/** The Discord permissions the client needs in the guild (validation; research note §8). */
export const DISCORD_REQUIRED_PERMISSIONS: readonly string[] = ['VIEW_CHANNEL', 'READ_MESSAGE_HISTORY'];

/**
 * The required scope validation names when the application lacks the privileged Server Members Intent (spec
 * "Connections": platform_b requires `guild.members`): without it Discord refuses GET /guilds/{id}/members (403
 * Missing Access), so the members of a private channel cannot be read and private channels fail closed.
 */
export const DISCORD_MEMBERS_INTENT_SCOPE = 'guild.members';

/**
 * Maps a failed validation call to spec "Connection validation errors": 401 → INVALID_CREDENTIALS; Unknown Guild
 * (10004, the guild_id of the credentials) → INVALID_CREDENTIALS; 403 Missing Access/Permissions →
 * INSUFFICIENT_PERMISSIONS; 429 → RATE_LIMITED; no answer → NETWORK_ERROR; anything else → PLATFORM_ERROR.
 */
export function discordValidationFailure(err: unknown): ValidationResult {
  const f = classifyDiscord(err);
  switch (f.kind) {
    case 'auth':
      return fail('INVALID_CREDENTIALS', 'Discord rejected the bot token (401 Unauthorized)');
    case 'unknown_guild':
      return fail('INVALID_CREDENTIALS', 'unknown guild: check guild_id and that the bot was added to the server');
    case 'no_access':
      return {
        valid: false,
        error: {
          code: 'INSUFFICIENT_PERMISSIONS',
          message: `Discord denied access (${f.platformCode}): check the bot's role permissions and that it is in the server`,
          required_scopes: [...DISCORD_REQUIRED_PERMISSIONS],
        },
      };
    case 'ratelimit':
      return {
        valid: false,
        error: {
          code: 'RATE_LIMITED',
          message: 'Discord rate limit reached; retry later',
          retry_after: Math.max(1, Math.ceil(f.retryAfter ?? 1)),
        },
      };
    case 'network':
      return fail('NETWORK_ERROR', 'cannot reach the Discord API');
    default:
      return fail('PLATFORM_ERROR', `Discord API error (${f.platformCode})`);
  }
}

const fail = (code: 'INVALID_CREDENTIALS' | 'NETWORK_ERROR' | 'PLATFORM_ERROR', message: string): ValidationResult => ({
  valid: false,
  error: { code, message },
});

/**
 * Maps a failed sync-side call to PlatformError (spec "Sync errors"): 401 → AUTH_ERROR; Unknown Channel/Guild and
 * 403 (the bot cannot see it) → CHANNEL_NOT_FOUND; 429 → RATE_LIMIT (retriable, retryAfter); 5xx and network →
 * PLATFORM_ERROR (retriable); anything else → PLATFORM_ERROR.
 */
export function discordPlatformError(err: unknown, call: string): PlatformError {
  const f = classifyDiscord(err);
  const base = { platformCode: f.platformCode, ...(f.status !== undefined ? { status: f.status } : {}) };
  switch (f.kind) {
    case 'auth':
      return new PlatformError('AUTH_ERROR', `Discord ${call}: authentication failed`, { retriable: false, ...base });
    case 'no_access':
    case 'unknown_channel':
    case 'unknown_guild':
      return new PlatformError('CHANNEL_NOT_FOUND', `Discord ${call}: not found or no access (${f.platformCode})`, {
        retriable: false,
        ...base,
      });
    case 'ratelimit':
      return new PlatformError('RATE_LIMIT', `Discord ${call}: rate limited`, {
        retriable: true,
        ...(f.retryAfter !== undefined ? { retryAfter: f.retryAfter } : {}),
        ...base,
      });
    case 'server':
      return new PlatformError('PLATFORM_ERROR', `Discord ${call}: server error (${f.platformCode})`, {
        retriable: true,
        ...base,
      });
    case 'network':
      return new PlatformError('PLATFORM_ERROR', `Discord ${call}: network error`, { retriable: true, ...base });
    default:
      return new PlatformError('PLATFORM_ERROR', `Discord ${call}: API error (${f.platformCode})`, {
        retriable: false,
        ...base,
      });
  }
}
