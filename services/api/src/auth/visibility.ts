import { AtlasError, type ChannelAccessView, type Principal } from '@atlas/core';
import type { ConnectionStore, DocumentStore } from '@atlas/stores';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { unknownChannel } from '../routes/known-channel.js';

/** What channel visibility reads: the channel-access read model and the connections' channel lists. */
export interface VisibilityPorts {
  /** Which private channels a platform identity may not see (channel membership from the platforms); absent: none hidden. */
  access?: ChannelAccessView | null;
  /** The connections' saved channel lists (a key scoped to connections sees their channels). */
  connections?: Pick<ConnectionStore, 'channels'> | null;
  /** Every channel id Atlas holds: a restricted caller's visible set is cut from it (FILTERED_ACROSS_CHANNELS). */
  documents?: Pick<DocumentStore, 'channelIds'> | null;
}

/** Which channels a principal sees: `null` every channel, else a predicate over channel ids. */
export type ChannelFilter = ((channelId: string) => boolean) | null;

declare module 'fastify' {
  interface FastifyRequest {
    /** The channels the caller may see (visibility.ts), computed once per request by the visibility hook. */
    channelFilter: ChannelFilter;
    /**
     * A restricted caller's visible channels on a route that reads across channels and filters by them
     * (FILTERED_ACROSS_CHANNELS) when no channel is named; null: no bound (an unrestricted caller, or a named channel).
     */
    visibleChannels: readonly string[] | null;
  }
}

/**
 * The channels `p` may see (docs/access.md "Channel access"): every channel for no principal on a public route, the
 * open local default, the bootstrap key and admin keys without a scope; else the channels inside the key's scope
 * (named channels, or channels of named connections) minus the private channels the key's platform identity is not a
 * member of (`access.hiddenChannels`; no identity: every private channel hidden; stale membership data: hidden). Null
 * when nothing is excluded, so an unrestricted caller pays nothing.
 */
export const channelFilterOf = async (p: Principal | null, ports: VisibilityPorts): Promise<ChannelFilter> => {
  if (!p || p.kind === 'local' || p.kind === 'bootstrap' || (p.role === 'admin' && !p.scope)) return null;
  const hidden = ports.access ? await ports.access.hiddenChannels(p.identity) : new Set<string>();
  let inScope: Set<string> | null = null;
  if (p.scope) {
    inScope = new Set(p.scope.channels ?? []);
    for (const id of p.scope.connections ?? [])
      for (const c of (await ports.connections?.channels(id)) ?? []) inScope.add(c.id);
  }
  if (hidden.size === 0 && inScope === null) return null;
  const scope = inScope;
  return (id) => !hidden.has(id) && (scope === null || scope.has(id));
};

/**
 * Routes a restricted caller (a non-null ChannelFilter) may call without naming a channel: they answer only what the
 * filter lets through (the channel list is filtered item by item), or hold nothing of any channel.
 */
const CROSS_CHANNEL_OK = new Set([
  'GET /api/health',
  'GET /api/me', // the caller itself: its role and its own scope (the web UI signs in with it)
  'GET /api/stats/health', // the stores' and the log's health: nothing of any channel
  'GET /api/channels',
  'GET /api/memories/:memory_id', // one memory, checked by its channel_id before it is sent
  // The caller's own ask sessions (AskScope.owner): nothing of anyone else's.
  'GET /api/ask/sessions',
  'GET /api/ask/sessions/:session_id',
  'DELETE /api/ask/sessions/:session_id',
  'GET /api/decisions/:item_id', // one decision or action item, checked by its channel_id before it is sent
  'POST /api/ask/feedback',
  // Resolving one contradiction: checked by its channel before anything is appended (404 when hidden).
  'POST /api/contradictions/:contradiction_id/resolve',
]);

/**
 * Routes a restricted caller may call without naming a channel that bound every read to its visible channels
 * (request.visibleChannels): search (results, total, facets), ask (retrieval, citations, the cached wiki's answer),
 * the entity tags' counts, the graph's cross-channel reads and the stats.
 */
const FILTERED_ACROSS_CHANNELS = new Set([
  'POST /api/search',
  'POST /api/ask',
  'POST /api/ask/upload',
  'GET /api/memories/entities',
  // Decisions and action items over the visible channels (docs/decisions.md).
  'GET /api/decisions',
  // The graph: cards aggregated over visible channels; an entity, its neighbours, subgraphs, paths and common
  // neighbours only of visible channels (an entity of another channel is 404 as an unknown one).
  'GET /api/graph/entities/cards',
  'GET /api/graph/entities/:ref',
  'GET /api/graph/entities/:ref/neighbors',
  'GET /api/graph/entities/:ref/card',
  'GET /api/graph/subgraph',
  'GET /api/graph/path',
  'GET /api/graph/common-neighbors',
  // Stats over the visible channels: system figures, the activity feed (without connections), top authors and
  // topics, the export.
  'GET /api/stats',
  'GET /api/stats/activity',
  'GET /api/stats/top-authors',
  'GET /api/stats/top-topics',
  'GET /api/stats/export',
  // Cancelling a sync job of a visible channel (a job of another channel is 404 as an unknown one).
  'POST /api/sync/cancel',
  // The wiki's aggregate metadata and activity over the visible channels; the sync schedules of visible channels.
  'GET /api/wiki/metadata',
  'GET /api/wiki/activity',
  'GET /api/sync/schedules',
  // A wiki entity page: its card over visible channels, and a restricted section when it is mentioned elsewhere.
  'GET /api/wiki/entities/:entity_type/:entity_id',
  // The digests of the visible channels (issue 27 point 4).
  'GET /api/digests',
  // The contradiction desk's list over the visible channels.
  'GET /api/contradictions',
]);

/**
 * Routes about the whole installation (storage counts, lag, LLM usage over every channel): a restricted caller may not
 * read them (403 FORBIDDEN); naming a channel would not help.
 */
const WHOLE_INSTALLATION = new Set(['GET /api/stats/metrics']);

const channelIdsOf = (r: FastifyRequest): string[] => {
  const ids: string[] = [];
  for (const src of [r.params, r.query, r.body])
    if (src && typeof src === 'object' && 'channel_id' in src) {
      const v = (src as { channel_id: unknown }).channel_id;
      if (typeof v === 'string') ids.push(v);
    }
  return ids;
};

/**
 * Channel visibility on every route (docs/access.md "Channel access"; issue 23, point 5), after authentication and
 * validation (preHandler):
 * - a `channel_id` in the path, query or body that the caller may not see is 404 NOT_FOUND, the very body an unknown
 *   channel gets (docs/conventions.md), so a hidden channel's existence does not leak;
 * - on search, ask and the entity counts (FILTERED_ACROSS_CHANNELS) a restricted caller (a key scope, or private
 *   channels hidden from its identity) that names no channel reads its visible channels only (request.visibleChannels);
 * - on the other routes that read across channels it must name a channel (400 INVALID_REQUEST, details.reason
 *   `channel_required`), except the CROSS_CHANNEL_OK routes: counts, facets and cards over every channel would
 *   include hidden ones;
 * - a single object answered with a `channel_id` the caller may not see becomes 404 (a memory, a page, a session by
 *   id), and the channel list `GET /api/channels` keeps only visible channels.
 */
export const registerVisibility = (app: FastifyInstance, ports: VisibilityPorts): void => {
  app.decorateRequest('channelFilter', null);
  app.decorateRequest('visibleChannels', null);
  app.addHook('preHandler', async (request) => {
    const route = request.routeOptions.url;
    if (!route) return;
    const filter = await channelFilterOf(request.principal, ports);
    request.channelFilter = filter;
    if (!filter) return;
    const ids = channelIdsOf(request);
    for (const id of ids) if (!filter(id)) throw unknownChannel(id);
    const key = `${request.method} ${route}`;
    if (WHOLE_INSTALLATION.has(key))
      throw new AtlasError('FORBIDDEN', 'system metrics are for keys that see every channel', {
        details: { reason: 'restricted_key' },
      });
    if (ids.length === 0 && FILTERED_ACROSS_CHANNELS.has(key)) {
      request.visibleChannels = ((await ports.documents?.channelIds()) ?? []).filter(filter);
      return;
    }
    if (ids.length === 0 && !CROSS_CHANNEL_OK.has(key) && !route.startsWith('/api/admin/'))
      throw new AtlasError(
        'INVALID_REQUEST',
        'this key sees some channels only: name a channel_id (reads across every channel are not offered to it)',
        { details: { reason: 'channel_required' } },
      );
  });
  app.addHook('preSerialization', async (request, _reply, payload: unknown) => {
    const filter = request.channelFilter;
    if (!filter || payload === null || typeof payload !== 'object') return payload;
    if (Array.isArray(payload) && request.routeOptions.url === '/api/channels')
      return payload.filter((c) => !(c && typeof c === 'object' && 'id' in c) || filter(String(c.id)));
    const ch = (payload as { channel_id?: unknown }).channel_id;
    if (typeof ch === 'string' && !filter(ch)) throw unknownChannel(ch);
    return payload;
  });
};
