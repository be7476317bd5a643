import { DiscordClient } from './discord-client.js';
import { MockPlatformClient } from './mock-client.js';
import { SlackClient } from './slack-client.js';
import type { PlatformClient, PlatformClientOptions, PlatformCredentials } from './types.js';

/**
 * The live client of a connection's platform (docs/connections.md): platform_a → SlackClient (@slack/web-api),
 * platform_b → DiscordClient (@discordjs/rest); with `opts.mock` (ADAPTER_MOCK=true) the generated MockPlatformClient
 * of that platform instead. Pure construction: no request is made until a method is called. `opts.slackApiUrl` /
 * `opts.discordApiUrl` point the SDKs at another base URL (the emulators in tests).
 */
export function platformClient(credentials: PlatformCredentials, opts: PlatformClientOptions = {}): PlatformClient {
  if (opts.mock) return new MockPlatformClient(credentials, opts.mock === true ? {} : opts.mock);
  return credentials.platform === 'platform_a'
    ? new SlackClient(credentials, opts)
    : new DiscordClient(credentials, opts);
}

export { DiscordClient } from './discord-client.js';
export { DISCORD_REQUIRED_PERMISSIONS } from './discord-errors.js';
export { channelPermissions } from './discord-permissions.js';
export {
  MOCK_HISTORY_DAYS,
  MOCK_INVALID_TOKEN,
  MockPlatformClient,
  type MockPostedMessage,
  mockPostedMessages,
} from './mock-client.js';
export { SLACK_REQUIRED_SCOPES, SlackClient } from './slack-client.js';
export {
  type ChannelMembers,
  type ClientLogEvent,
  type ConnectionChannel,
  type FetchOptions,
  type MessagePage,
  type PlatformClient,
  type PlatformClientOptions,
  type PlatformCredentials,
  PlatformError,
  type PlatformId,
  type SyncErrorCode,
  type ValidationErrorCode,
  type ValidationResult,
} from './types.js';
