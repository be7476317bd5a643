import { channelDigest, type Digest, digestPeriodOf } from '@atlas/query';
import type { DocumentStore, LifecycleStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import { channelCheck, type KnownChannelPorts } from './known-channel.js';

export interface DigestRoutesOptions {
  documents: Pick<DocumentStore, 'getChannel' | 'topicWindow' | 'channelIds'> & KnownChannelPorts['documents'];
  /** The lifecycle read store (decisions and action items with their transitions); absent: topics only. */
  lifecycle?: Pick<LifecycleStore, 'list'> | undefined;
}

const IsoTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');
/** The period of a digest: the `days` days (1 to 31, default 7) before `end` (default now). */
const PeriodQuery = z.object({
  end: IsoTime.optional(),
  days: z.coerce.number().int().min(1).max(31).default(7),
});

/** The [start, end) of a digest from its query: `end` (default now) and the `days` before it. ISO 8601 UTC. */
export const digestPeriod = (q: { end?: string | undefined; days: number }, now = Date.now()) =>
  digestPeriodOf(q.end ? Date.parse(q.end) : now, q.days);

/**
 * Digests (issue 27 point 4, documented additions, docs/digests.md):
 * - `GET /api/channels/{channel_id}/digest?end=&days=`: the channel's digest for the `days` days (default 7, 1 to 31)
 *   before `end` (ISO 8601, default now): decisions made and changed, action items opened, closed, due and overdue,
 *   new and growing topics, with numbered citations and its Markdown text (composeDigest). 404 for an unknown
 *   channel or one the caller may not see; 400 INVALID_REQUEST for a bad `end` or `days`.
 * - `GET /api/digests?end=&days=`: the digests of every channel the caller sees for that period, busiest first,
 *   quiet channels counted in `quiet_channels` and left out.
 */
export const digestRoutes: FastifyPluginAsync<DigestRoutesOptions> = async (app, { documents, lifecycle }) => {
  const known = channelCheck({ documents });

  const digestOf = (channelId: string, start: string, end: string) =>
    channelDigest({ documents, lifecycle }, channelId, start, end);

  app.get(
    '/api/channels/:channel_id/digest',
    { schema: { params: z.object({ channel_id: z.string().min(1) }), querystring: PeriodQuery } },
    async (request) => {
      const { channel_id } = request.params as { channel_id: string };
      await known(channel_id);
      const { start, end } = digestPeriod(request.query as z.infer<typeof PeriodQuery>);
      return digestOf(channel_id, start, end);
    },
  );

  app.get('/api/digests', { schema: { querystring: PeriodQuery } }, async (request) => {
    const q = request.query as z.infer<typeof PeriodQuery>;
    const { start, end } = digestPeriod(q);
    const ids = request.visibleChannels ?? (await documents.channelIds());
    const all: Awaited<ReturnType<typeof digestOf>>[] = [];
    for (const id of ids) all.push(await digestOf(id, start, end));
    const busy = all.filter((d) => d.has_activity);
    const weight = (d: Digest) =>
      d.decisions.made.length +
      d.decisions.changed.length +
      d.action_items.opened.length +
      d.action_items.closed.length +
      d.topics.new.length +
      d.topics.growing.length;
    busy.sort((a, b) => weight(b) - weight(a) || a.channel_id.localeCompare(b.channel_id));
    return { period: { start, end, days: q.days }, digests: busy, quiet_channels: all.length - busy.length };
  });
};
