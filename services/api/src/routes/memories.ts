import { AsOf, FactType, Importance, notFound } from '@atlas/core';
import type { DocumentStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { channelCheck } from './known-channel.js';
import { withClusterIds } from './memory-clusters.js';

const IsoTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');

const MemoriesQuery = z.object({
  // spec "Memories": channel_id required; page default 1; limit default 20, max 100
  channel_id: z.string().min(1),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  topic: z.string().min(1).optional(),
  entity: z.string().min(1).optional(),
  importance: Importance.optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
  fact_type: FactType.optional(),
  as_of: AsOf.optional(), // issue 27 point 2: the facts stated by then
});

/** What the memories routes read: the facts and the wiki's clusters. */
export interface MemoryRoutesOptions {
  documents: DocumentStore;
  /** The wiki's cluster assignment (cluster_id). */
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'clusterIdsOf'>;
}

/**
 * GET /api/memories, /api/memories/topics, /api/memories/entities, /api/memories/{memory_id} (spec "Memories"). An
 * unknown channel_id is 404 NOT_FOUND (known-channel.ts). The detail form's cluster_id is the wiki's current
 * assignment (memory-clusters.ts), null for a fact the wiki has not clustered yet. `as_of` (list and detail; issue 27
 * point 2) answers as of that instant: the facts stated by then, with their validity then (DocumentStore AsOfRead).
 */
export const memoryRoutes: FastifyPluginAsync<MemoryRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const { documents } = ports;
  const known = channelCheck(ports);

  app.get('/api/memories', { schema: { querystring: MemoriesQuery } }, async ({ query }) => {
    await known(query.channel_id);
    const { rows, total } = await documents.listMemories({
      ...query,
      channelId: query.channel_id,
      factType: query.fact_type,
      asOf: query.as_of,
    });
    return { memories: rows, total, page: query.page, pages: Math.ceil(total / query.limit) };
  });

  app.get(
    '/api/memories/topics',
    { schema: { querystring: z.object({ channel_id: z.string().min(1) }) } },
    async ({ query }) => {
      await known(query.channel_id);
      return { topics: await documents.topicCounts(query.channel_id) };
    },
  );

  // The spec does not show this route's parameters: channel_id narrows to one channel, limit caps the list.
  const EntitiesQuery = z.object({
    channel_id: z.string().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(500).default(100),
  });
  app.get('/api/memories/entities', { schema: { querystring: EntitiesQuery } }, async ({ query, visibleChannels }) => {
    await known(query.channel_id);
    const channels = visibleChannels ?? undefined; // a restricted caller: its visible channels only (visibility.ts)
    return { entities: await documents.entityCounts({ channelId: query.channel_id, channels, limit: query.limit }) };
  });

  app.get(
    '/api/memories/:memory_id',
    {
      schema: {
        params: z.object({ memory_id: z.string().min(1) }),
        // issue 27 point 2: the fact as Atlas knew it then (404 when stated after; validity as of then)
        querystring: z.object({ as_of: AsOf.optional() }),
      },
    },
    async ({ params, query }) => {
      const memory = await documents.getMemory(params.memory_id, { asOf: query.as_of });
      if (!memory) throw notFound('memory', params.memory_id);
      return (await withClusterIds(ports.wiki, [memory]))[0]!;
    },
  );
};
