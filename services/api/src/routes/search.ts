import { SearchBody, type SearchPorts, searchMemories } from '@atlas/query';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { channelCheck, type KnownChannelPorts } from './known-channel.js';

/** What POST /api/search reads: the search's ports, and the document store's known channels. */
export type SearchRoutesOptions = SearchPorts & { documents: KnownChannelPorts['documents'] };

/**
 * POST /api/search (spec "Search"; searchMemories). `channel_id` null searches every channel; an unknown channel_id
 * is 404 NOT_FOUND (docs/conventions.md "Unknown channel").
 */
export const searchRoutes: FastifyPluginAsync<SearchRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const known = channelCheck(ports);
  app.post('/api/search', { schema: { body: SearchBody } }, async ({ body, visibleChannels }) => {
    await known(body.channel_id);
    // A restricted caller searching every channel searches its visible channels (visibility.ts): results, total, facets.
    return searchMemories(ports, body, visibleChannels ?? undefined);
  });
};
