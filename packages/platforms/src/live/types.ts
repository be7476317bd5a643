import { AtlasError, type MessageIngested, type SyncErrorCode } from '@atlas/core';

/** The two platforms of the spec ("Connection": `platform_a` = Slack, `platform_b` = Discord). */
export type PlatformId = 'platform_a' | 'platform_b';

/**
 * Credentials of a connection (spec "Connection", credentials table). Never logged, never echoed in errors.
 * - platform_a: a Slack bot token (`xoxb-…`) and the app's signing secret (checked for presence only: no API call
 *   can verify it; it signs inbound requests).
 * - platform_b: a Discord bot token and the guild (server) id the connection reads.
 */
export type PlatformCredentials =
  | { platform: 'platform_a'; bot_token: string; signing_secret: string }
  | { platform: 'platform_b'; bot_token: string; guild_id: string };

/** Codes of spec "Errors → Connection validation errors". */
export type ValidationErrorCode =
  | 'INVALID_CREDENTIALS'
  | 'AUTH_EXPIRED'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'RATE_LIMITED'
  | 'NETWORK_ERROR'
  | 'PLATFORM_ERROR';

/**
 * Outcome of `PlatformClient.validate()`.
 * - valid: the workspace (Slack team / Discord guild), the bot user, and the granted scopes (Slack OAuth scopes from
 *   `x-oauth-scopes`; Discord: names of the guild-level permissions the bot holds, e.g. `VIEW_CHANNEL`).
 * - invalid: spec code and a message without secrets; `required_scopes` (the missing ones) for INSUFFICIENT_PERMISSIONS,
 *   `retry_after` (whole seconds, rounded up) for RATE_LIMITED.
 */
export type ValidationResult =
  | { valid: true; workspace: { id: string; name: string }; bot: { id: string; name: string }; scopes: string[] }
  | {
      valid: false;
      error: { code: ValidationErrorCode; message: string; required_scopes?: string[]; retry_after?: number };
    };

/**
 * One channel the bot can list (spec "Connection channel" without `sync_enabled`, which the service owns).
 * `name` is the platform's name without a `#` prefix; `member_count` is Slack `num_members`, or for Discord the
 * guild's approximate member count (Discord publishes no per-channel count).
 */
export interface ConnectionChannel {
  id: string;
  name: string;
  is_private: boolean;
  member_count: number;
  /** The channel's topic, or null (sync's ChannelDiscovered, as the importer maps it). */
  topic?: string | null;
  /** When the channel was created (ISO 8601 UTC), or null when the platform does not say. */
  created_at?: string | null;
}

/**
 * Who can see a channel on its platform (listMembers; docs/access.md "Channel access"). `members`: the platform user ids
 * that can see a private channel (Slack `U…`, Discord user snowflakes; sorted, unique, bots included); null for a public
 * channel (visible to the whole workspace, so no list is read).
 */
export interface ChannelMembers {
  channel_id: string;
  is_private: boolean;
  members: string[] | null;
}

/** Options of one fetch: `after` = a platform message id (Slack ts / Discord snowflake) or null for the start. */
export interface FetchOptions {
  after?: string | null;
  /** Top-level messages per page (Slack history: 1..999, Discord: 1..100; clamped). */
  limit: number;
  signal?: AbortSignal;
}

/** One page of `fetchMessages`. */
export interface MessagePage {
  /** Kept messages (importer's skip rules), oldest first, `source: 'sync'`. Slack: plus the replies of threads started in the page. */
  messages: MessageIngested[];
  /** Pass as the next `after`: the newest top-level platform id seen (including skipped ones); null when nothing was seen. */
  cursor: string | null;
  /** True when more top-level messages follow `cursor`. */
  hasMore: boolean;
}

/**
 * A live platform connection: validation of its credentials, and its channels, messages and replies.
 * - `validate` never throws for platform or network failures: it maps them to spec validation codes.
 * - `listChannels`, `fetchMessages`, `fetchReplies` throw `PlatformError` (spec "Sync errors" codes); 429s, 5xx and
 *   network failures are retried first (Retry-After honoured, exponential backoff, bounded, abortable).
 */
export interface PlatformClient {
  readonly platform: PlatformId;
  validate(): Promise<ValidationResult>;
  listChannels(): Promise<ConnectionChannel[]>;
  /**
   * One page of a channel's history for sync, oldest first, mapped to the same MessageIngested events the importer
   * makes for the same messages (same ids, text, thread, author, timestamps, permalinks, attachments, reactions;
   * only `source` differs: `sync`).
   */
  fetchMessages(channelId: string, opts: FetchOptions): Promise<MessagePage>;
  /**
   * Thread replies of a thread root newer than `after` (Slack conversations.replies, oldest first, root excluded), for
   * replies that arrive after their root was synced. Discord: replies are ordinary messages, so always [].
   * A root that no longer exists (Slack `thread_not_found`) gives [].
   */
  fetchReplies(channelId: string, threadTs: string, opts: FetchOptions): Promise<MessageIngested[]>;
  /**
   * Who can see the channel now (ChannelMembers). Slack: conversations.info, then for a private channel
   * conversations.members, every page. Discord: the channel's permission overwrites over the guild's roles; for a
   * private channel (@everyone cannot VIEW_CHANNEL) every guild member (GET /guilds/{id}/members, every page; needs the
   * Server Members intent) whose permissions in the channel include VIEW_CHANNEL (owner and ADMINISTRATOR included).
   * Throws PlatformError (CHANNEL_NOT_FOUND for an unknown channel, AUTH_ERROR, RATE_LIMIT, PLATFORM_ERROR).
   */
  listMembers(channelId: string, opts?: { signal?: AbortSignal }): Promise<ChannelMembers>;
  /**
   * Posts `text` to the channel as the bot (issue 27 point 4: the posted digest, docs/digests.md). `text` is in the
   * platform's own markup, already rendered (Slack mrkdwn, at most 40,000 characters; Discord Markdown, at most
   * 2,000). Slack chat.postMessage (scope `chat:write`, links not unfurled); Discord POST /channels/{id}/messages
   * (SEND_MESSAGES; mentions never ping). Answers the posted message's platform id (Slack ts, Discord snowflake).
   * Not retried (a post is not idempotent): throws PlatformError (CHANNEL_NOT_FOUND when the bot cannot post there,
   * AUTH_ERROR, RATE_LIMIT, PLATFORM_ERROR) and the caller tries again later.
   */
  postMessage(channelId: string, text: string, opts?: { signal?: AbortSignal }): Promise<{ message_id: string }>;
}

/** Codes of spec "Errors → Sync errors" (SYNC_ERROR_STATUS of `@atlas/core`). */
export type { SyncErrorCode } from '@atlas/core';

/**
 * The error of listChannels / fetchMessages / fetchReplies (spec "Sync errors").
 * `retryAfter` is in seconds (RATE_LIMIT, when the platform said); `retriable` tells a job whether to retry later;
 * `platformCode` is the platform's own code (`not_in_channel`, `50001`…) for details. Messages never hold tokens.
 */
export class PlatformError extends AtlasError {
  declare readonly code: SyncErrorCode;

  constructor(
    code: SyncErrorCode,
    message: string,
    readonly opts: { retriable: boolean; retryAfter?: number; platformCode?: string; status?: number },
  ) {
    super(code, message, { retriable: opts.retriable });
    this.name = 'PlatformError';
  }
  get retryAfter(): number | undefined {
    return this.opts.retryAfter;
  }
}

/** One client log line (no tokens, no message text): a retry, a wait, a failure. */
export interface ClientLogEvent {
  level: 'debug' | 'info' | 'warn';
  platform: PlatformId;
  msg: string;
  /** Slack method or Discord route. */
  call?: string;
  attempt?: number;
  waitMs?: number;
  code?: string;
}

/** Options of `platformClient`. Delays in milliseconds. */
export interface PlatformClientOptions {
  /** Slack Web API base, default `https://slack.com/api/` (tests: the emulator's `…/api/`). */
  slackApiUrl?: string;
  /** Discord API base without version, default `https://discord.com/api` (tests: the emulator's `…/api`). */
  discordApiUrl?: string;
  /** Retries of one call after a 429, 5xx or network failure (default 5); then PlatformError. */
  maxRetries?: number;
  /** First backoff delay (default 1000 ms; doubled per attempt, capped by `maxBackoffMs`, default 30 s). */
  backoffMs?: number;
  maxBackoffMs?: number;
  /** A Retry-After longer than this is not waited out: RATE_LIMIT is thrown with retryAfter (default 120 s). */
  maxRetryAfterMs?: number;
  /** Per-request timeout (default 30 s). */
  timeoutMs?: number;
  log?: (event: ClientLogEvent) => void;
  /**
   * ADAPTER_MOCK: serve the generated mock platform (`MockPlatformClient`, no network) instead of the platform's API.
   * `now` is the mock's clock in ms (tests); default Date.now.
   */
  mock?: boolean | { now?: () => number };
}
