import { AsOf } from '@atlas/core';
import type { ConnectionStore, DocumentStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { channelCheck, unknownChannel } from './known-channel.js';

/** A timestamp cursor: ISO 8601, or epoch seconds as platform_a writes them ("1517789022.000033"). */
const Cursor = z
  .string()
  .min(1)
  .refine(
    (v) => /^\d{9,11}(\.\d{1,6})?$/.test(v) || !Number.isNaN(Date.parse(v)),
    'must be an ISO 8601 timestamp or epoch seconds',
  );

const MessagesQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50), // spec Limits: default 50, max 200
  before: Cursor.optional(),
  after: Cursor.optional(),
  // Issue 27 point 2 (a documented addition): only the messages written by then (docs/routes.md "As of a date").
  as_of: AsOf.optional(),
});
const ChannelParams = z.object({ channel_id: z.string().min(1) });

/** What the channel routes read: channels and messages, wiki page counts, connected channels. */
export interface ChannelRoutesOptions {
  documents: Pick<DocumentStore, 'listChannels' | 'getChannel' | 'listMessages' | 'knownChannels'>;
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'pageCount'>;
  /** The connection store (`connected`); absent: every channel is not connected. */
  connections?: { store: Pick<ConnectionStore, 'connectedChannels'> } | undefined;
}

/**
 * GET /api/channels, /api/channels/{channel_id}, /api/channels/{channel_id}/messages (spec "Channels").
 *
 * `connected` (bool) is derived at read time from the connection store: true exactly when the channel is selected
 * for sync (sync_enabled) in at least one connection whose status is `connected` (ConnectionStore.connectedChannels;
 * without a connection store every channel is false). `wiki_page_count` (detail) is the number of pages of the
 * channel's current wiki (WikiStore.pageCount, the figure of GET /api/wiki/status page_count and
 * /api/stats/channel/{channel_id}; 0 before the first generation). Unknown channel: 404 NOT_FOUND.
 */
export const channelRoutes: FastifyPluginAsync<ChannelRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { documents, wiki } = ports;
  const known = channelCheck({ documents });
  const connectedOf = (ids: readonly string[]) =>
    ports.connections ? ports.connections.store.connectedChannels(ids) : Promise.resolve(new Set<string>());

  app.get('/api/channels', async () => {
    const channels = await documents.listChannels();
    const connected = await connectedOf(channels.map((c) => c.id));
    return channels.map(({ id, name, platform, last_sync, message_count, fact_count }) => ({
      id,
      name,
      platform,
      connected: connected.has(id),
      last_sync,
      message_count,
      fact_count,
    }));
  });

  app.get('/api/channels/:channel_id', { schema: { params: ChannelParams } }, async ({ params }) => {
    const channel = await documents.getChannel(params.channel_id);
    if (!channel) throw unknownChannel(params.channel_id);
    const [connected, pages] = await Promise.all([connectedOf([channel.id]), wiki.pageCount(channel.id)]);
    return {
      id: channel.id,
      name: channel.name,
      platform: channel.platform,
      connected: connected.has(channel.id),
      last_sync: channel.last_sync,
      message_count: channel.message_count,
      fact_count: channel.fact_count,
      created_at: channel.created_at,
      entity_count: channel.entity_count,
      topic_count: channel.topic_count,
      wiki_page_count: pages,
      settings: channel.settings,
    };
  });

  app.get(
    '/api/channels/:channel_id/messages',
    { schema: { params: ChannelParams, querystring: MessagesQuery } },
    async ({ params, query }) => {
      await known(params.channel_id);
      const { as_of, ...page } = query;
      return documents.listMessages(params.channel_id, { ...page, asOf: as_of });
    },
  );
};
