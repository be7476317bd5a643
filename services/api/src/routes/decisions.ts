import { type LifecycleEvidence, type LifecycleItem, notFound } from '@atlas/core';
import type { DocumentStore, LifecycleStore } from '@atlas/stores';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { LifecycleKind, LifecycleState } from '../contract/decisions.js';
import { channelCheck } from './known-channel.js';

const IsoTime = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'must be an ISO 8601 timestamp');

/** Filters of both list routes: kind, state, owner, since/until (ISO 8601), page (from 1), limit (default 20, max 100). */
const Filters = {
  kind: LifecycleKind.optional(),
  state: LifecycleState.optional(),
  owner: z.string().min(1).optional(),
  since: IsoTime.optional(),
  until: IsoTime.optional(),
  page: z.coerce.number().int().min(1).default(1),
  limit: z.coerce.number().int().min(1).max(100).default(20),
};

/** What the lifecycle routes read: the lifecycle store, and the document store for the unknown-channel rule. */
export interface DecisionRoutesOptions {
  documents: DocumentStore;
  /** The lifecycle projector's store; absent: the routes are not registered. */
  lifecycle?: Pick<LifecycleStore, 'list' | 'get'> | null;
}

const evidenceView = (e: LifecycleEvidence) => ({
  message_id: e.messageId,
  platform_message_id: e.platformMessageId,
  permalink: e.permalink,
  author_id: e.authorId,
  author_name: e.authorName,
  excerpt: e.excerpt,
});

/** An item's list form (docs/decisions.md "Item"): snake case, and the message that last moved it. */
export const lifecycleItemView = (i: LifecycleItem) => ({
  id: i.itemId,
  channel_id: i.channelId,
  kind: i.kind,
  state: i.state,
  title: i.title,
  owner: i.owner,
  due_date: i.dueDate,
  created_at: i.createdAt,
  updated_at: i.updatedAt,
  superseded_by: i.supersededBy,
  thread_ts: i.threadTs,
  source: evidenceView(i.source),
  moved_by: evidenceView((i.transitions.at(-1) ?? { evidence: i.source }).evidence),
});

/**
 * The detail form (docs/decisions.md "Item"; GET /api/decisions/{item_id}, and each entry of an entity card's
 * `lifecycle`): the list form and the history, oldest first.
 */
export const lifecycleDetailView = (i: LifecycleItem) => ({
  ...lifecycleItemView(i),
  history: i.transitions.map((t) => ({
    from: t.from,
    to: t.to,
    at: t.at,
    rule: t.rule,
    evidence: evidenceView(t.evidence),
  })),
});

/**
 * Decisions and action items with their lifecycle (issue 27 point 1; docs/decisions.md): GET /api/decisions (across
 * channels: a restricted caller reads its visible channels only, request.visibleChannels; `channel_id` narrows to one
 * channel), GET /api/channels/{channel_id}/decisions, and GET /api/decisions/{item_id} with its full history (an item
 * of a channel the caller may not see is 404 like an unknown one: visibility.ts checks the answer's channel_id).
 * An unknown channel is 404 NOT_FOUND; pages of `limit` (default 20, max 100), newest change first.
 */
export const decisionRoutes: FastifyPluginAsync<DecisionRoutesOptions> = async (root, ports) => {
  const app = root.withTypeProvider<ZodTypeProvider>();
  const lifecycle = ports.lifecycle;
  if (!lifecycle) return;
  const known = channelCheck(ports);

  const page = async (
    channelIds: readonly string[] | null,
    q: {
      kind?: LifecycleItem['kind'];
      state?: LifecycleItem['state'];
      owner?: string;
      since?: string;
      until?: string;
      page: number;
      limit: number;
    },
  ) => {
    const { items, total } = await lifecycle.list({
      channelIds,
      kind: q.kind,
      state: q.state,
      owner: q.owner,
      since: q.since,
      until: q.until,
      limit: q.limit,
      offset: (q.page - 1) * q.limit,
    });
    return { items: items.map(lifecycleItemView), total, page: q.page, pages: Math.ceil(total / q.limit) };
  };

  app.get(
    '/api/decisions',
    { schema: { querystring: z.object({ channel_id: z.string().min(1).optional(), ...Filters }) } },
    async ({ query, visibleChannels }) => {
      await known(query.channel_id);
      return page(query.channel_id ? [query.channel_id] : visibleChannels, query);
    },
  );

  app.get(
    '/api/channels/:channel_id/decisions',
    { schema: { params: z.object({ channel_id: z.string().min(1) }), querystring: z.object(Filters) } },
    async ({ params, query }) => {
      await known(params.channel_id);
      return page([params.channel_id], query);
    },
  );

  app.get(
    '/api/decisions/:item_id',
    { schema: { params: z.object({ item_id: z.string().min(1) }) } },
    async ({ params }) => {
      const item = await lifecycle.get(params.item_id);
      if (!item) throw notFound('decision', params.item_id);
      return lifecycleDetailView(item);
    },
  );
};
