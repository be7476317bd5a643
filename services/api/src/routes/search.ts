import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { ApiPorts } from '../ports.js';
import { SearchBody, searchMemories } from '../search.js';

/** POST /api/search (spec "Search"). */
export const searchRoutes: FastifyPluginAsync<ApiPorts> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  app.post('/api/search', { schema: { body: SearchBody } }, async ({ body }) =>
    searchMemories({ ...ports, vectors: ports.vectors }, body),
  );
};
