import { FactType, Importance } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiPorts } from '../ports.js';
import { searchMemories } from '../search.js';

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
});

/**
 * POST /api/memories/search (spec "Memories"): hybrid search inside one channel, answered with the full
 * memory object (the detail form plus permalink), score and highlights; query_time_ms is an int here.
 */
export const memorySearchRoutes: FastifyPluginAsync<ApiPorts> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post('/api/memories/search', { schema: { body: MemorySearchBody } }, async ({ body }) => {
    const started = performance.now();
    const res = await searchMemories(ports, {
      query: body.query,
      channel_id: body.channel_id,
      limit: body.limit,
      filters: body.filters,
      include_citations: false,
      search_mode: 'hybrid',
      fuzzy: false,
    });
    const full = await ports.documents.getMemories(res.results.map((r) => r.memory.id));
    let results = res.results.flatMap((r) => {
      const memory = full.get(r.memory.id);
      return memory ? [{ memory, score: r.score, highlights: r.highlights }] : [];
    });
    if (body.sort === 'recent')
      results = results.sort((a, b) => b.memory.message_ts.localeCompare(a.memory.message_ts));
    return { results, total: res.total, query_time_ms: Math.round(performance.now() - started) };
  });
};
