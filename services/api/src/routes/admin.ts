import { AtlasError } from '@atlas/core';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiPorts } from '../ports.js';

/**
 * POST /api/admin/backfill/{type} (spec "Admin"): `embeddings` drains the embedding backlog in batches of
 * 100 and answers `{type, processed, remaining}` (the spec does not show the body). `entities` comes with
 * the knowledge graph; until then it answers 404.
 */
export const adminRoutes: FastifyPluginAsync<ApiPorts> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post(
    '/api/admin/backfill/:type',
    { schema: { params: z.object({ type: z.enum(['entities', 'embeddings']) }) } },
    async ({ params }) => {
      if (params.type === 'entities')
        throw new AtlasError('NOT_FOUND', 'entity backfill comes with the knowledge graph, which is not built yet');
      if (!ports.backfillEmbeddings) {
        throw new AtlasError('PROVIDER_UNAVAILABLE', 'no embedding provider or vector store is configured', {
          retriable: false,
        });
      }
      return { type: params.type, ...(await ports.backfillEmbeddings()) };
    },
  );
};
