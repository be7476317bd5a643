import type { ChannelDiscovered, NewEvent } from '@atlas/core';
import { type ConnectionChannel, type PlatformClient, type PlatformCredentials, PlatformError } from '@atlas/platforms';
import type { SyncJobRecord } from '@atlas/stores';
import { validationError } from './job-state.js';
import type { SyncJobDeps } from './types.js';

/** The platform client of the job's connection (its stored credentials); CHANNEL_NOT_FOUND when it is gone. */
export const clientOf = async (job: SyncJobRecord, deps: SyncJobDeps): Promise<PlatformClient> => {
  const found = job.connection_id ? await deps.connections.credentials(job.connection_id) : null;
  if (!found)
    throw new PlatformError('CHANNEL_NOT_FOUND', `connection '${job.connection_id}' of the channel no longer exists`, {
      retriable: false,
    });
  return deps.platformClient({ platform: found.platform, ...found.credentials } as PlatformCredentials);
};

/** The channel on the platform (listChannels) and the workspace (validate); CHANNEL_NOT_FOUND when not listed. */
export const platformChannel = async (client: PlatformClient, channelId: string, signal: AbortSignal) => {
  const v = await client.validate();
  if (!v.valid) throw validationError(v);
  if (signal.aborted) throw signal.reason;
  const channel = (await client.listChannels()).find((c) => c.id === channelId);
  if (!channel)
    throw new PlatformError('CHANNEL_NOT_FOUND', `channel '${channelId}' does not exist or the bot cannot see it`, {
      retriable: false,
    });
  return { channel, workspace: v.workspace };
};

/** ChannelDiscovered (`source: 'sync'`) as the importer maps the same channel. */
export const channelEvent = (
  platform: PlatformClient['platform'],
  workspace: { id: string; name: string },
  c: ConnectionChannel,
): NewEvent<'ChannelDiscovered'> => {
  const data: ChannelDiscovered = {
    platform,
    workspaceId: workspace.id,
    workspaceName: workspace.name,
    channelId: c.id,
    name: c.name.replace(/^#/, ''),
    isPrivate: c.is_private,
    memberCount: Math.max(0, Math.round(c.member_count)),
    topic: c.topic ?? null,
    createdAt: c.created_at ?? null,
    source: 'sync',
  };
  return { type: 'ChannelDiscovered', key: c.id, data };
};
