import { detectSourceFormat } from './detect.js';
import { planDiscord } from './discord.js';
import type { ImportOptions, ImportPlan } from './plan.js';
import { planSlack } from './slack.js';
import { openSource } from './source.js';

export { detectFormat, looksLikeDiscordExport } from './detect.js';
export { DISCORD_KEPT_TYPES, mapDiscordMessage, parseDiscordExport, snowflakeTime } from './discord.js';
export {
  type ChannelMembers,
  type ClientLogEvent,
  type ConnectionChannel,
  channelPermissions,
  DISCORD_REQUIRED_PERMISSIONS,
  DiscordClient,
  type FetchOptions,
  type MessagePage,
  MOCK_HISTORY_DAYS,
  MOCK_INVALID_TOKEN,
  MockPlatformClient,
  type PlatformClient,
  type PlatformClientOptions,
  type PlatformCredentials,
  PlatformError,
  type PlatformId,
  platformClient,
  SLACK_REQUIRED_SCOPES,
  SlackClient,
  type SyncErrorCode,
  type ValidationErrorCode,
  type ValidationResult,
} from './live/index.js';
export {
  contentHash,
  type ImportFormat,
  type ImportOptions,
  type ImportPlan,
  mediaTypeOfMime,
  mediaTypeOfName,
  stableStringify,
} from './plan.js';
export { parseSlackExport } from './slack.js';
export {
  SLACK_KEPT_SUBTYPES,
  SLACK_SYSTEM_SUBTYPES,
  slackPermalink,
  slackSkipReason,
  slackTsToIso,
} from './slack-message.js';

/**
 * Detects the format of `path` (Slack export directory or .zip; DiscordChatExporter .json, directory or .zip) and
 * parses all of it into an ImportPlan: channels, kept messages (validated against `MessageIngested`), skip counts.
 * Pure: reads files only, writes nothing, so a failure never leaves anything half-applied.
 * `opts.workspaceUrl` (Slack only) sets the permalink host when the export does not reveal it.
 * Throws AtlasError IMPORT_FAILED (`<file>: <problem>`, details {file, problem}) on the first bad input:
 * unknown format, invalid JSON, a day file that is not an array, a message without ts / id / timestamp,
 * or a Slack export without channels.json; a zip beyond `opts.zipLimits` (docs/import.md "Archive bounds").
 * `opts.onFileRead` reports the files read (the "reading files" phase of `atlas import`).
 */
export async function planImport(path: string, opts: ImportOptions = {}): Promise<ImportPlan> {
  const src = await openSource(path, opts);
  try {
    const format = await detectSourceFormat(src);
    return await (format === 'platform_a_export' ? planSlack(src, opts) : planDiscord(src, opts));
  } finally {
    await src.close();
  }
}
export { DEFAULT_ZIP_LIMITS, formatBytes, RATIO_FLOOR_BYTES, type ZipLimits, zipLimitsOf } from './zip.js';
