import { notFound } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiPorts } from '../ports.js';

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
});
const ChannelParams = z.object({ channel_id: z.string().min(1) });

/** GET /api/channels, /api/channels/{channel_id}, /api/channels/{channel_id}/messages (spec "Channels"). */
export const channelRoutes: FastifyPluginAsync<ApiPorts> = async (root, { documents }) => {
  const app = root.withTypeProvider<ZodTypeProvider>();

  app.get('/api/channels', async () => documents.listChannels());

  app.get('/api/channels/:channel_id', { schema: { params: ChannelParams } }, async ({ params }) => {
    const channel = await documents.getChannel(params.channel_id);
    if (!channel) throw notFound('channel', params.channel_id);
    return channel;
  });

  app.get(
    '/api/channels/:channel_id/messages',
    { schema: { params: ChannelParams, querystring: MessagesQuery } },
    async ({ params, query }) => {
      if (!(await documents.getChannel(params.channel_id))) throw notFound('channel', params.channel_id);
      return documents.listMessages(params.channel_id, query);
    },
  );
};
