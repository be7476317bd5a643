import { AtlasError } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiPorts } from '../ports.js';

/**
 * POST /api/admin/backfill/{type} (spec "Admin"): `embeddings` drains the embedding backlog in batches of
 * 100 and answers `{type, processed, remaining}` (the spec does not show the body); `entities` drains the
 * entity backlog the same way: fact sets whose extraction was skipped (LLM down) are extracted, graph writes
 * that failed (graph store down) are applied. A dependency still down answers 503 with what is left queued.
 */
export const adminRoutes: FastifyPluginAsync<ApiPorts> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/admin/backfill/:type',
    { schema: { params: z.object({ type: z.enum(['entities', 'embeddings']) }) } },
    async ({ params }) => {
      if (params.type === 'entities') return { type: params.type, ...(await ports.backfillEntities()) };
      if (!ports.backfillEmbeddings) {
        throw new AtlasError('PROVIDER_UNAVAILABLE', 'no embedding provider or vector store is configured', {
          retriable: false,
        });
      }
      return { type: params.type, ...(await ports.backfillEmbeddings()) };
    },
  );
};
