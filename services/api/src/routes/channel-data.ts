import { AtlasError, type ChannelSettings, type NewEvent } from '@atlas/core';
import type { DocumentStore, GraphStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { unknownChannel } from './known-channel.js';

const ChannelParams = z.object({ channel_id: z.string().min(1) });

/**
 * Body of PUT /api/channels/{channel_id}/settings (spec "Channel settings"): any subset of the fields; unknown fields
 * are refused. retention_days: whole days 1..36,500, or null to keep messages forever.
 */
export const SettingsUpdate = z
  .object({
    sync_enabled: z.boolean(),
    wiki_enabled: z.boolean(),
    graph_enabled: z.boolean(),
    fact_extraction_enabled: z.boolean(),
    retention_days: z.number().int().min(1).max(36_500).nullable(),
    digest_enabled: z.boolean(),
    digest_days: z.number().int().min(1).max(31),
  })
  .partial()
  .strict();

/** The response of DELETE /api/channels/{channel_id}/data (spec "Channels", plus deleted_messages). */
export interface ChannelDataDeletion {
  deleted_facts: number;
  deleted_entities: number;
  deleted_wiki_pages: number;
  deleted_messages: number;
}

/** What the channel data and settings routes read, and the channel commands they append. */
export interface ChannelDataRoutesOptions {
  documents: Pick<DocumentStore, 'channelSettings' | 'getChannel'>;
  graph: Pick<GraphStore, 'counts'>;
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'pageCount'>;
  /**
   * Channel commands: appends a ChannelDataDeleted or ChannelSettingsUpdated to atlas.messages and resolves once the
   * projectors have applied it (AtlasError STORE_UNAVAILABLE when they do not catch up in time). Absent: these
   * routes are not registered.
   */
  channelCommands?: {
    append(command: NewEvent<'ChannelDataDeleted'> | NewEvent<'ChannelSettingsUpdated'>): Promise<void>;
  };
  /**
   * Whether the bot can post to the channel (it is in some connection's channel list: docs/digests.md "Posted
   * digests"). Absent: not checked.
   */
  canPostTo?(channelId: string): Promise<boolean>;
}

/**
 * DELETE /api/channels/{channel_id}/data and GET/PUT /api/channels/{channel_id}/settings (spec "Channels"). Both
 * writes are commands: they append ChannelDataDeleted or ChannelSettingsUpdated to the log and answer once the
 * projectors have applied them (ports.channelCommands). An unknown channel is 404 NOT_FOUND; a bad settings body 400
 * INVALID_REQUEST; projectors that do not catch up within the wait 503 STORE_UNAVAILABLE (the command stays in the
 * log and is applied later).
 */
export const channelDataRoutes: FastifyPluginAsync<ChannelDataRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { documents, channelCommands } = ports;
  if (!channelCommands) return;

  const settingsOf = async (channelId: string): Promise<ChannelSettings> => {
    const s = await documents.channelSettings(channelId);
    if (!s) throw unknownChannel(channelId);
    return s;
  };

  /**
   * Counts what the deletion removes (the channel's live messages and facts, its graph entities, its current wiki
   * pages), appends ChannelDataDeleted and waits for every projector: deleted_* are those counts.
   */
  app.delete('/api/channels/:channel_id/data', { schema: { params: ChannelParams } }, async ({ params }) => {
    const channel = await documents.getChannel(params.channel_id);
    if (!channel) throw unknownChannel(params.channel_id);
    const [graph, pages] = await Promise.all([
      ports.graph.counts(params.channel_id),
      ports.wiki.pageCount(params.channel_id),
    ]);
    await channelCommands.append({
      type: 'ChannelDataDeleted',
      key: params.channel_id,
      data: { channelId: params.channel_id, requestedAt: new Date().toISOString() },
    });
    const out: ChannelDataDeletion = {
      deleted_facts: channel.fact_count,
      deleted_entities: graph.nodes,
      deleted_wiki_pages: pages,
      deleted_messages: channel.message_count,
    };
    return out;
  });

  app.get('/api/channels/:channel_id/settings', { schema: { params: ChannelParams } }, async ({ params }) =>
    settingsOf(params.channel_id),
  );

  /** Merges the given fields over the current settings, appends the complete result, and answers it. */
  app.put(
    '/api/channels/:channel_id/settings',
    { schema: { params: ChannelParams, body: SettingsUpdate } },
    async ({ params, body }) => {
      const current = await settingsOf(params.channel_id);
      const next: ChannelSettings = { ...current, ...body };
      // Opting in to the posted digest needs a way to post: a connection that lists the channel.
      if (
        next.digest_enabled &&
        !current.digest_enabled &&
        ports.canPostTo &&
        !(await ports.canPostTo(params.channel_id))
      )
        throw new AtlasError(
          'CONFLICT',
          `channel '${params.channel_id}' is in no connection, so the bot cannot post its digest there: connect its workspace first (POST /api/connections)`,
          { details: { channel_id: params.channel_id, field: 'digest_enabled' } },
        );
      await channelCommands.append({
        type: 'ChannelSettingsUpdated',
        key: params.channel_id,
        data: {
          channelId: params.channel_id,
          syncEnabled: next.sync_enabled,
          wikiEnabled: next.wiki_enabled,
          graphEnabled: next.graph_enabled,
          factExtractionEnabled: next.fact_extraction_enabled,
          retentionDays: next.retention_days,
          digestEnabled: next.digest_enabled,
          digestDays: next.digest_days,
          updatedAt: new Date().toISOString(),
        },
      });
      return settingsOf(params.channel_id);
    },
  );
};
