import { AsOf, FactType, type FreshnessPort, Importance } from '@atlas/core';
import { type SearchPorts, searchMemories } from '@atlas/query';
import type { DocumentStore, WikiStore } from '@atlas/stores';
import type { WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { freshnessMark } from './freshness.js';
import { channelCheck, type KnownChannelPorts } from './known-channel.js';
import { withClusterIds } from './memory-clusters.js';

const IsoTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');

/** Body of POST /api/memories/search (spec "Memories"); the limit default is not shown: 10, as search. */
const MemorySearchBody = z.object({
  channel_id: z.string().min(1),
  query: z.string().min(1).max(2000),
  filters: z
    .object({
      importance: z.array(Importance).optional(),
      fact_types: z.array(FactType).optional(),
      entities: z.array(z.string()).optional(),
      date_range: z.object({ start: IsoTime.optional(), end: IsoTime.optional() }).optional(),
    })
    .optional(),
  // `relevance` is the spec's seen value; `recent` orders the same results newest first.
  sort: z.enum(['relevance', 'recent']).default('relevance'),
  limit: z.number().int().min(1).max(100).default(10),
  as_of: AsOf.optional(), // issue 27 point 2: search what was known then (POST /api/search's as_of)
});

/** What memory search reads: the search's ports, the facts' detail forms and the wiki's clusters. */
export type MemorySearchRoutesOptions = SearchPorts & {
  documents: Pick<DocumentStore, 'getMemories'> & KnownChannelPorts['documents'];
  /** The wiki's cluster assignment (cluster_id). */
  wiki: Pick<WikiStore<WikiPage, WikiStructure>, 'clusterIdsOf'>;
  /** Freshness marks (docs/routes.md "Search"); absent: no `freshness` in the answer. */
  freshness?: FreshnessPort | null;
};

/**
 * POST /api/memories/search (spec "Memories"): hybrid search inside one channel, answered with the full
 * memory object (the detail form plus permalink; cluster_id from the wiki, memory-clusters.ts), score and highlights;
 * query_time_ms is an int here. `total` is the number of matching facts as POST /api/search counts them in hybrid
 * mode (searchMemories), whatever the limit. An unknown channel_id is 404 NOT_FOUND.
 */
export const memorySearchRoutes: FastifyPluginAsync<MemorySearchRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const known = channelCheck(ports);
  app.post('/api/memories/search', { schema: { body: MemorySearchBody } }, async ({ body }) => {
    const started = performance.now();
    await known(body.channel_id);
    const res = await searchMemories(ports, {
      query: body.query,
      channel_id: body.channel_id,
      limit: body.limit,
      filters: body.filters,
      include_citations: false,
      search_mode: 'hybrid',
      fuzzy: false,
      as_of: body.as_of,
    });
    const ids = res.results.map((r) => r.memory.id);
    const found = await ports.documents.getMemories(ids, { asOf: body.as_of });
    const full = new Map((await withClusterIds(ports.wiki, [...found.values()])).map((m) => [m.id, m]));
    let results = res.results.flatMap((r) => {
      const memory = full.get(r.memory.id);
      return memory ? [{ memory, score: r.score, highlights: r.highlights }] : [];
    });
    if (body.sort === 'recent')
      results = results.sort((a, b) => b.memory.message_ts.localeCompare(a.memory.message_ts));
    const freshness = await freshnessMark(ports.freshness, body.channel_id, []);
    return { results, total: res.total, query_time_ms: Math.round(performance.now() - started), ...freshness };
  });
};
