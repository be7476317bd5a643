import type { FreshnessPort } from '@atlas/core';
import { runSearch, SearchBody, type SearchPorts } from '@atlas/query';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { freshnessMark } from './freshness.js';
import { channelCheck, type KnownChannelPorts } from './known-channel.js';

/**
 * What POST /api/search reads: the search's ports, the document store's known channels, and the freshness reader
 * (absent: no `freshness` in the answer).
 */
export type SearchRoutesOptions = SearchPorts & {
  documents: KnownChannelPorts['documents'];
  freshness?: FreshnessPort | null;
};

/**
 * POST /api/search (spec "Search"; searchMemories). `channel_id` null searches every channel; an unknown channel_id
 * is 404 NOT_FOUND (docs/conventions.md "Unknown channel"). The answer adds `freshness` (docs/routes.md "Search"):
 * the searched channel, or the results' channels and every channel of the caller's scope still being read.
 */
export const searchRoutes: FastifyPluginAsync<SearchRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const known = channelCheck(ports);
  app.post('/api/search', { schema: { body: SearchBody } }, async ({ body, visibleChannels }) => {
    await known(body.channel_id);
    // A restricted caller searching every channel searches its visible channels (visibility.ts): results, total, facets.
    const { response, memories } = await runSearch(ports, body, { channels: visibleChannels ?? undefined });
    const drawn = response.results.flatMap((r) => memories.get(r.memory.id)?.channel_id ?? []);
    return {
      ...response,
      ...(await freshnessMark(ports.freshness, body.channel_id ?? null, drawn, visibleChannels)),
    };
  });
};
