import { AtlasError, type NewEvent } from '@atlas/core';
import type { DocumentStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { channelCheck, type KnownChannelPorts } from './known-channel.js';

const Paging = {
  status: z.enum(['open', 'resolved']).optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
};
/** Query of GET /api/contradictions: an optional channel, the status (both when left out), the page. */
const ListQuery = z.object({ channel_id: z.string().min(1).optional(), ...Paging });
const ChannelParams = z.object({ channel_id: z.string().min(1) });
const IdParams = z.object({ contradiction_id: z.string().min(1).max(100) });
/** Body of POST /api/contradictions/{id}/resolve: which side stands, and an optional note (≤ 2,000 characters). */
const ResolveBody = z.object({
  outcome: z.enum(['earlier', 'later', 'both']),
  note: z.string().max(2000).optional(),
});

/** What the contradiction routes read, and the command they append. */
export interface ContradictionRoutesOptions {
  documents: Pick<DocumentStore, 'listContradictions' | 'getContradiction'> & KnownChannelPorts['documents'];
  /**
   * Appends ContradictionResolved (atlas.graph) and resolves once the projectors applied it (AtlasError
   * STORE_UNAVAILABLE when they do not catch up in time). Absent: the resolve route is not registered.
   */
  contradictionCommands?: { append(event: NewEvent<'ContradictionResolved'>): Promise<void> };
}

const notFound = (id: string) =>
  new AtlasError('NOT_FOUND', `contradiction '${id}' was not found`, { details: { contradiction_id: id } });

/**
 * The contradiction desk (issue 27, point 5; docs/contradictions.md):
 * - GET /api/contradictions (query channel_id, status open|resolved, page, limit ≤ 100, default 20) and
 *   GET /api/channels/{channel_id}/contradictions: potential contradictions, newest first, with both sides and their
 *   sources; without channel_id over every channel the caller sees (a restricted key: its visible channels). An unknown
 *   or hidden channel is 404 NOT_FOUND.
 * - POST /api/contradictions/{contradiction_id}/resolve `{outcome: earlier|later|both, note?}` (admin: 403 FORBIDDEN
 *   for others, by the route rules): appends ContradictionResolved and answers the resolved contradiction once the
 *   projectors applied it. 404 NOT_FOUND for an unknown id or one of a channel the caller may not see; 409 CONFLICT
 *   when it is already resolved (the first resolution stands).
 */
export const contradictionRoutes: FastifyPluginAsync<ContradictionRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const known = channelCheck(ports);
  const { documents } = ports;

  const page = async (channelIds: readonly string[] | null, q: z.infer<typeof ListQuery>) => {
    const { rows, total } = await documents.listContradictions({
      channelIds,
      status: q.status,
      page: q.page,
      limit: q.limit,
    });
    return { contradictions: rows, total, page: q.page, pages: Math.ceil(total / q.limit) };
  };

  app.get('/api/contradictions', { schema: { querystring: ListQuery } }, async (request) => {
    const { query } = request;
    if (query.channel_id) {
      await known(query.channel_id);
      return page([query.channel_id], query);
    }
    return page(request.visibleChannels, query);
  });

  app.get(
    '/api/channels/:channel_id/contradictions',
    { schema: { params: ChannelParams, querystring: z.object(Paging) } },
    async ({ params, query }) => {
      await known(params.channel_id);
      return page([params.channel_id], query);
    },
  );

  const { contradictionCommands } = ports;
  if (!contradictionCommands) return;
  app.post(
    '/api/contradictions/:contradiction_id/resolve',
    { schema: { params: IdParams, body: ResolveBody } },
    async (request) => {
      const { params, body } = request;
      const found = await documents.getContradiction(params.contradiction_id);
      // A contradiction of a channel the caller may not see answers as an unknown one.
      if (!found || (request.channelFilter && !request.channelFilter(found.channel_id)))
        throw notFound(params.contradiction_id);
      if (found.resolution)
        throw new AtlasError('CONFLICT', `contradiction '${found.id}' is already resolved`, {
          details: { contradiction_id: found.id, outcome: found.resolution.outcome },
        });
      await contradictionCommands.append({
        type: 'ContradictionResolved',
        key: found.channel_id,
        data: {
          contradictionId: found.id,
          channelId: found.channel_id,
          factId: found.earlier.memory_id,
          supersededBy: found.later.memory_id,
          outcome: body.outcome,
          invalidAt: found.later.message_ts,
          note: body.note ?? null,
          resolvedBy: request.principal?.name ?? 'local',
          resolvedAt: new Date().toISOString(),
        },
      });
      const after = await documents.getContradiction(found.id);
      if (!after) throw notFound(found.id); // its facts went while it was being resolved
      return after;
    },
  );
};
