import { randomUUID } from 'node:crypto';
import {
  AtlasError,
  type Freshness,
  type FreshnessPort,
  normalizeEntityName,
  notFound,
  type WikiRefreshRequested,
} from '@atlas/core';
import type {
  DocumentStore,
  GraphStore,
  WikiJobRecord,
  WikiJobStore,
  WikiStatus,
  WikiStore,
  WikiVersionSummary,
} from '@atlas/stores';
import type { WikiCitation, WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { freshnessMark } from './freshness.js';
import { entityCard, entityView } from './graph.js';
import { unknownChannel } from './known-channel.js';
import { WikiAsOfQuery, wikiVersionAt } from './wiki-history.js';

const Limit = (def: number, max: number) => z.coerce.number().int().min(1).max(max).default(def);
const ChannelQuery = z.object({ channel_id: z.string().min(1) });

/** Jobs read per channel for sync-history and activity durations (newest first). */
const JOBS_READ = 200;

/** Seconds a run is expected to take: the channel's last run, else 1 s per 500 facts (at least 1). */
const estimateSeconds = (status: WikiStatus, facts: number): number =>
  status.last_duration_ms != null
    ? Math.max(1, Math.ceil(status.last_duration_ms / 1000))
    : Math.max(1, Math.ceil(facts / 500));

/**
 * A channel's wiki as one read sees it (wikiRoutes' wikiAt): now, or as of a date. `page` throws 404 NOT_FOUND for a
 * page it lacks; `mark` is the freshness mark to spread into a page answer (empty as of a date, or without a port).
 */
interface WikiRead {
  structure: () => Promise<WikiStructure>;
  page: (pageId: string) => Promise<WikiPage>;
  mark: () => Promise<{ freshness?: Freshness }>;
}

/** What the wiki routes read and run. */
export interface WikiRoutesOptions {
  /** The wiki's stored pages, structure, versions and generation state (reads never generate). */
  wiki: WikiStore<WikiPage, WikiStructure>;
  documents: DocumentStore;
  /** The knowledge graph (entity pages). */
  graph: GraphStore;
  /** The wiki's job history (written by the wiki worker; the same from every API process). */
  wikiJobs: Pick<WikiJobStore, 'job' | 'jobs' | 'activeJob'>;
  /**
   * Appends a WikiRefreshRequested command (atlas.commands) for the wiki worker; null when there is no vector store
   * (embeddings off), since clustering needs the fact vectors.
   */
  requestWiki: ((command: WikiRefreshRequested) => Promise<void>) | null;
  /** How long a job request waits for the worker to record the job, ms (default 5,000; the answer comes anyway). */
  settleMs?: number;
  /**
   * When the next daily full wiki rebuild is due (WIKI_REBUILD_CRON, run by the process that runs the wiki
   * projector), or null when it is off: GET /api/wiki/status next_generation_scheduled. Absent: null.
   */
  nextWikiRebuild?: () => Date | null;
  /** Freshness marks of the page routes (docs/wiki.md "Freshness"); absent: no `freshness` in the answer. */
  freshness?: FreshnessPort | null;
}

/**
 * The wiki routes (spec "Wiki"; docs/routes.md "Wiki routes"): stored structure, pages, versions, status,
 * metadata, activity and generation history of a channel, entity pages from the graph, and the generation jobs
 * (`POST /api/wiki/refresh`, `POST /api/admin/wiki/rebuild`). Reads serve what is stored and never generate (no LLM
 * call); a channel never generated answers 404 saying to POST /api/wiki/refresh. A job is a WikiRefreshRequested
 * command run by the wiki worker, its state in the job history (WikiJobStore); a second job for a channel while one
 * is queued or running answers 409 CONFLICT with that job's id in details. The structure, page, channel and topic
 * routes take `as_of` (issue 27 point 2): the same answer from the version current then (wikiAt).
 */
export const wikiRoutes: FastifyPluginAsync<WikiRoutesOptions> = async (instance, ports) => {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { wiki, documents } = ports;
  const { wikiJobs } = ports;

  const channelOf = async (channelId: string) => {
    const ch = await documents.getChannel(channelId);
    if (!ch) throw unknownChannel(channelId);
    return ch;
  };

  /** The stored structure with the live is_stale flag; 404 before the first generation. */
  const structureOf = async (channelId: string): Promise<WikiStructure> => {
    const [s, status] = await Promise.all([wiki.structure(channelId), wiki.status(channelId)]);
    if (!s) {
      await channelOf(channelId);
      throw new AtlasError(
        'NOT_FOUND',
        `no wiki has been generated for channel ${channelId} yet: POST /api/wiki/refresh with {"channel_id": "${channelId}"} to generate it`,
        { details: { channel_id: channelId, is_generating: status.is_generating } },
      );
    }
    return { ...s, is_stale: status.is_stale };
  };

  const pageOf = async (channelId: string, pageId: string): Promise<WikiPage> => {
    const page = await wiki.page(channelId, pageId);
    if (page) return page;
    await structureOf(channelId); // 404 for an unknown channel or a wiki never generated
    throw notFound('wiki page', pageId);
  };

  /**
   * The wiki a read route serves (issue 27 point 2; docs/wiki.md "History"). Without `asOf`: the stored wiki, its
   * structure with the live is_stale flag, its pages, and the channel's freshness mark. With `asOf` (an ISO 8601 UTC
   * timestamp, validated by AsOf): the version current then (wikiVersionAt), its structure and pages as saved and no
   * freshness mark (history, like the version snapshots). 404 NOT_FOUND for an unknown channel, a wiki never generated,
   * none generated by `asOf` (details: channel_id, as_of, first_generated_at) and, from `page`, a page the wiki lacks.
   */
  const wikiAt = async (channelId: string, asOf: string | undefined): Promise<WikiRead> => {
    if (!asOf)
      return {
        structure: () => structureOf(channelId),
        page: (pageId) => pageOf(channelId, pageId),
        mark: () => freshnessMark(ports.freshness, channelId, []),
      };
    await channelOf(channelId);
    const v = await wikiVersionAt(wiki, channelId, asOf);
    return {
      structure: async () => v.structure,
      page: async (pageId) => {
        const page = v.pages.find((p) => p.id === pageId);
        if (!page) throw notFound('wiki page', pageId);
        return page;
      },
      mark: async () => ({}),
    };
  };

  /** The job that saved a version (not an incremental run that found nothing changed), from `jobs`. */
  const jobOfVersion = (jobs: readonly WikiJobRecord[], version: number) =>
    jobs.find((j) => j.status === 'completed' && j.version_number === version && !j.skipped);

  /** A version's duration: from the job that saved it, else the channel's last run for the current version. */
  const durationOf = (v: WikiVersionSummary, status: WikiStatus, jobs: readonly WikiJobRecord[]): number | null => {
    const job = jobOfVersion(jobs, v.version_number);
    if (job?.duration_ms != null) return job.duration_ms;
    return v.version_number === status.current_version ? status.last_duration_ms : null;
  };

  /**
   * Requests a generation job (a WikiRefreshRequested for the wiki worker) and waits up to settleMs for the worker to
   * record it; 409 while one is queued or running for the channel, or when its wiki is disabled.
   */
  const startJob = async (
    channelId: string,
    mode: 'full' | 'incremental',
    requestedBy: 'api' | 'admin',
  ): Promise<{ job_id: string; channel_id: string; mode: 'full' | 'incremental' }> => {
    const request = ports.requestWiki;
    if (!request)
      throw new AtlasError(
        'PROVIDER_UNAVAILABLE',
        'wiki generation needs fact embeddings and there is no vector store (embeddings are off: set EMBEDDING_PROVIDER); stored wiki pages are still served',
        { expose: true }, // a configuration fact for the caller, no internals (errors.ts: 5xx bodies)
      );
    if ((await documents.channelSettings(channelId))?.wiki_enabled === false)
      throw new AtlasError(
        'CONFLICT',
        `the wiki of channel ${channelId} is disabled in its settings: PUT /api/channels/${channelId}/settings with {"wiki_enabled": true} first`,
        { details: { channel_id: channelId, wiki_enabled: false } },
      );
    const busy = await wikiJobs.activeJob(channelId);
    if (busy)
      throw new AtlasError('CONFLICT', `a wiki generation is already ${busy.status} for channel ${channelId}`, {
        details: { job_id: busy.job_id, channel_id: channelId, started_at: busy.started_at ?? busy.requested_at },
      });
    const jobId = randomUUID();
    await request({ jobId, channelId, mode, requestedAt: new Date().toISOString(), requestedBy });
    const until = Date.now() + (ports.settleMs ?? 5_000);
    while (!(await wikiJobs.job(jobId)) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    return { job_id: jobId, channel_id: channelId, mode };
  };

  /** The job answer: status `started`, job_id, estimated_duration_seconds (spec), plus channel_id and mode. */
  const jobAnswer = async (job: { job_id: string; channel_id: string; mode: string }, status: WikiStatus) => {
    const { total } = await documents.listMemories({ channelId: job.channel_id, page: 1, limit: 1 });
    return {
      status: 'started' as const,
      job_id: job.job_id,
      estimated_duration_seconds: estimateSeconds(status, total),
      channel_id: job.channel_id,
      mode: job.mode,
    };
  };

  // `as_of` (issue 27 point 2) on the structure, page, channel and topic routes: the version current then (wikiAt).
  app.get(
    '/api/wiki/structure',
    { schema: { querystring: ChannelQuery.extend(WikiAsOfQuery.shape) } },
    async ({ query }) => (await wikiAt(query.channel_id, query.as_of)).structure(),
  );

  app.get(
    '/api/wiki/pages/:page_id',
    {
      schema: {
        params: z.object({ page_id: z.string().min(1) }),
        querystring: ChannelQuery.extend(WikiAsOfQuery.shape),
      },
    },
    async ({ params, query }) => {
      const w = await wikiAt(query.channel_id, query.as_of);
      return { ...(await w.page(params.page_id)), ...(await w.mark()) };
    },
  );

  app.get('/api/wiki/status', { schema: { querystring: ChannelQuery } }, async ({ query }) => {
    await channelOf(query.channel_id);
    const [status, [current]] = await Promise.all([wiki.status(query.channel_id), wiki.versions(query.channel_id, 1)]);
    const job = await wikiJobs.activeJob(query.channel_id);
    // Spec "Wiki" status: page_count of the current version; next_generation_scheduled is the next daily full
    // rebuild (WIKI_REBUILD_CRON, 02:00 UTC by default; null when it is off).
    return {
      ...status,
      page_count: current?.page_count ?? 0,
      next_generation_scheduled: ports.nextWikiRebuild?.()?.toISOString() ?? null,
      job_id: job?.job_id ?? null,
    };
  });

  app.get(
    '/api/wiki/versions',
    { schema: { querystring: ChannelQuery.extend({ limit: Limit(10, 100) }) } },
    async ({ query }) => {
      await channelOf(query.channel_id);
      return { versions: await wiki.versions(query.channel_id, query.limit) };
    },
  );

  app.get(
    '/api/wiki/versions/:version_number',
    {
      schema: { params: z.object({ version_number: z.coerce.number().int().min(1) }), querystring: ChannelQuery },
    },
    async ({ params, query }) => {
      const ch = await channelOf(query.channel_id);
      const v = await wiki.version(query.channel_id, params.version_number);
      if (!v) throw notFound('wiki version', String(params.version_number));
      return {
        version_number: v.version_number,
        channel_id: v.channel_id,
        generated_at: v.generated_at,
        archived_at: v.archived_at,
        page_count: v.page_count,
        model: v.model,
        channel_name: v.structure.channel_name ?? ch.name,
        platform: v.structure.platform ?? ch.platform,
        structure: v.structure,
        overview: v.pages.find((p) => p.id === 'overview') ?? null,
        pages: v.pages,
        metadata: v.metadata,
      };
    },
  );

  /**
   * GET /api/wiki/metadata (spec "Wiki" Metadata; docs/conventions.md "Wiki metadata"). With `channel_id`: that
   * channel (unknown: 404), whether or not its wiki was generated; without: the aggregate over every channel
   * (channel_id null). member_count: distinct authors of live messages (across channels: each person once);
   * message_count: live messages; memory_count: facts; entity_count: distinct graph entities linked to facts;
   * media_count: live messages with an attachment or file; page_count: pages of the current wiki (summed over
   * channels); generation_cost_usd: what the LLM summaries of the last generation cost (0 when extractive; summed over
   * channels' last generations); generation_duration_ms: the last generation's duration (summed over channels). Both
   * generation fields are null before any generation (no such value exists). A channel adds what its current version
   * records: channel_name, platform, generated_at, is_stale, is_generating, current_version, model, topic_count,
   * sub_topic_count, citation_count, last_duration_ms and `generation` (the version's metadata), null before one.
   */
  app.get(
    '/api/wiki/metadata',
    { schema: { querystring: z.object({ channel_id: z.string().min(1).optional() }) } },
    async (request) => {
      const { query } = request;
      const channelId = query.channel_id ?? null;
      const channel = channelId === null ? null : await channelOf(channelId);
      // A restricted caller's aggregate covers its visible channels only (visibility.ts).
      const visible = request.visibleChannels;
      const [counts, generations] = await Promise.all([
        documents.contentCounts(channelId, visible ?? undefined),
        wiki.generations(channelId === null ? visible : [channelId]),
      ]);
      const runs = [...generations.values()];
      const durations = runs.flatMap((g) => (g.duration_ms === null ? [] : [g.duration_ms]));
      const common = {
        channel_id: channelId,
        member_count: counts.authors,
        message_count: counts.messages,
        memory_count: counts.facts,
        entity_count: counts.entities,
        media_count: counts.media,
        page_count: runs.reduce((n, g) => n + g.page_count, 0),
        generation_cost_usd:
          runs.length === 0 ? null : Math.round(runs.reduce((n, g) => n + g.cost_usd, 0) * 1e9) / 1e9,
        generation_duration_ms: durations.length === 0 ? null : durations.reduce((a, b) => a + b, 0),
      };
      if (channelId === null || channel === null)
        return {
          ...common,
          channel_count: visible ? visible.length : (await documents.listChannels()).length,
          generated_channel_count: runs.length,
        };
      const status = await wiki.status(channelId);
      const current = status.current_version == null ? null : await wiki.version(channelId, status.current_version);
      const pages = current?.pages ?? [];
      const byType = (t: WikiPage['page_type']) => pages.filter((p) => p.page_type === t).length;
      return {
        ...common,
        channel_name: channel.name,
        platform: channel.platform,
        generated_at: current?.generated_at ?? null,
        is_stale: status.is_stale,
        is_generating: status.is_generating,
        current_version: status.current_version,
        model: current?.model ?? null,
        topic_count: byType('topic'),
        sub_topic_count: byType('sub-topic'),
        citation_count: pages.reduce((n, p) => n + p.citations.length, 0),
        last_duration_ms: status.last_duration_ms,
        generation: current?.metadata ?? null,
      };
    },
  );

  app.get(
    '/api/wiki/activity',
    { schema: { querystring: z.object({ channel_id: z.string().min(1).optional(), limit: Limit(20, 200) }) } },
    async ({ query, visibleChannels }) => {
      // No channel named: every channel, or a restricted caller's visible ones (visibility.ts).
      const channelIds = query.channel_id
        ? [(await channelOf(query.channel_id)).id]
        : (visibleChannels ?? (await documents.listChannels()).map((c) => c.id));
      const activities = [];
      for (const channelId of channelIds) {
        const [versions, status, jobs] = await Promise.all([
          wiki.versions(channelId, query.limit),
          wiki.status(channelId),
          wikiJobs.jobs(channelId, JOBS_READ),
        ]);
        for (const v of versions)
          activities.push({
            channel_id: channelId,
            action: 'generated',
            version_number: v.version_number,
            page_count: v.page_count,
            duration_ms: durationOf(v, status, jobs),
            timestamp: v.generated_at,
          });
      }
      activities.sort((a, b) => b.timestamp.localeCompare(a.timestamp) || b.version_number - a.version_number);
      return { activities: activities.slice(0, query.limit) };
    },
  );

  app.get(
    '/api/wiki/sync-history',
    { schema: { querystring: ChannelQuery.extend({ limit: Limit(20, 100) }) } },
    async ({ query }) => {
      const channelId = query.channel_id;
      await channelOf(channelId);
      const status = await wiki.status(channelId);
      const history: {
        sync_id: string;
        started_at: string;
        completed_at: string | null;
        status: 'queued' | 'running' | 'completed' | 'failed';
        mode: string | null;
        version_number: number | null;
        pages_generated: number;
        facts_processed: number;
        error: { code: string; message: string } | null;
      }[] = [];
      const jobs = await wikiJobs.jobs(channelId, JOBS_READ);
      // Jobs that saved no version: queued, running, failed, or incremental with nothing changed (skipped).
      for (const j of jobs)
        if (j.status !== 'completed' || j.skipped)
          history.push({
            sync_id: j.job_id,
            started_at: j.started_at ?? j.requested_at,
            completed_at: j.completed_at,
            status: j.status,
            mode: j.mode,
            version_number: j.version_number,
            pages_generated: 0,
            facts_processed: j.facts,
            error: j.error,
          });
      // Every saved version is one completed run.
      for (const v of await wiki.versions(channelId, query.limit)) {
        const snap = await wiki.version(channelId, v.version_number);
        const meta = snap?.metadata ?? {};
        const job = jobOfVersion(jobs, v.version_number);
        const ms = durationOf(v, status, jobs);
        history.push({
          sync_id: job?.job_id ?? `${channelId}:v${v.version_number}`,
          started_at: job?.started_at ?? job?.requested_at ?? v.generated_at,
          completed_at:
            job?.completed_at ?? (ms == null ? null : new Date(Date.parse(v.generated_at) + ms).toISOString()),
          status: 'completed',
          mode: typeof meta.mode === 'string' ? meta.mode : null,
          version_number: v.version_number,
          pages_generated: typeof meta.pages_rebuilt === 'number' ? meta.pages_rebuilt : v.page_count,
          facts_processed: typeof meta.facts === 'number' ? meta.facts : 0,
          error: null,
        });
      }
      history.sort((a, b) => b.started_at.localeCompare(a.started_at));
      return { history: history.slice(0, query.limit) };
    },
  );

  app.post(
    '/api/wiki/refresh',
    { schema: { body: z.object({ channel_id: z.string().min(1), force: z.boolean().default(false) }) } },
    async ({ body }, reply) => {
      await channelOf(body.channel_id);
      const status = await wiki.status(body.channel_id);
      const exists = status.current_version != null;
      const job = await startJob(body.channel_id, exists && !body.force ? 'incremental' : 'full', 'api');
      return reply.status(202).send(await jobAnswer(job, status));
    },
  );

  app.post(
    '/api/admin/wiki/rebuild',
    {
      schema: {
        // No body at all arrives as null.
        body: z.object({ channel_id: z.string().min(1).optional(), force: z.boolean().optional() }).nullish(),
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      if (body.channel_id) {
        await channelOf(body.channel_id);
        const status = await wiki.status(body.channel_id);
        const job = await startJob(body.channel_id, 'full', 'admin');
        return reply.status(202).send(await jobAnswer(job, status));
      }
      // Every channel with facts and no run in progress: one job each.
      const started = [];
      let seconds = 0;
      for (const ch of await documents.listChannels()) {
        if ((await wikiJobs.activeJob(ch.id)) || (await documents.channelSettings(ch.id))?.wiki_enabled === false)
          continue;
        const { total } = await documents.listMemories({ channelId: ch.id, page: 1, limit: 1 });
        if (total === 0) continue;
        const status = await wiki.status(ch.id);
        const job = await startJob(ch.id, 'full', 'admin');
        seconds += estimateSeconds(status, total);
        started.push({ channel_id: ch.id, job_id: job.job_id });
      }
      return reply.status(202).send({
        status: 'started',
        job_id: started[0]?.job_id ?? null,
        estimated_duration_seconds: seconds,
        jobs: started,
      });
    },
  );

  app.get(
    '/api/wiki/entities/:entity_type/:entity_id',
    { schema: { params: z.object({ entity_type: z.string().min(1), entity_id: z.string().min(1) }) } },
    async (request) => {
      const { params } = request;
      const visible = request.visibleChannels ? new Set(request.visibleChannels) : null;
      const e = await ports.graph.getEntity(params.entity_id);
      if (!e || e.type.toLowerCase() !== params.entity_type.toLowerCase() || (visible && !visible.has(e.channel_id)))
        throw notFound(`${params.entity_type} entity`, params.entity_id);
      const card = await entityCard(ports.graph, documents, wiki, e.name, Date.now(), visible);
      // A restricted caller's page says that mentions elsewhere are left out (not where, nor how many).
      const norm = normalizeEntityName(e.name);
      const restricted =
        visible !== null &&
        (await ports.graph.findEntities({ names: [e.name], type: e.type })).some(
          (x) => normalizeEntityName(x.name) === norm && !visible.has(x.channel_id),
        );
      const facts = [...(await documents.getMemories(e.source_fact_ids)).values()].sort((a, b) =>
        a.message_ts.localeCompare(b.message_ts),
      );
      const channelNames = new Map((await documents.listChannels()).map((c) => [c.id, c.name]));
      const citations: WikiCitation[] = facts.map((f, i) => ({
        id: `[${i + 1}]`,
        author: f.author_name,
        channel: channelNames.get(f.channel_id) ?? f.channel_id,
        timestamp: f.message_ts,
        text_excerpt: f.memory_text.length > 300 ? `${f.memory_text.slice(0, 297)}...` : f.memory_text,
        permalink: f.permalink,
        media_type: null,
        media_name: null,
      }));
      const summary = card?.summary ?? `${e.name} (${e.type}).`;
      const content = [
        `# ${e.name}`,
        '',
        `*${e.type}*`,
        '',
        summary,
        '',
        ...(facts.length > 0 ? ['## Facts', '', ...facts.map((f, i) => `- ${f.memory_text} [${i + 1}]`), ''] : []),
        ...(card && card.related_entities.length > 0
          ? ['## Related', '', ...card.related_entities.map((r) => `- ${r.name} (${r.type}, ${r.relationship})`), '']
          : []),
        ...(restricted
          ? ['## Elsewhere', '', `*Restricted: ${e.name} is also mentioned in channels you cannot see.*`, '']
          : []),
      ].join('\n');
      return {
        id: `entity-${e.type.toLowerCase()}-${e.id}`,
        slug: `entity/${e.type.toLowerCase()}/${e.id}`,
        title: e.name,
        page_type: 'entity' as const,
        entity: entityView(e, true),
        content,
        summary,
        memory_count: facts.length,
        last_updated: e.updated_at,
        citations,
        card,
        // Our addition (docs/access.md "What a caller sees"): true when mentions in channels the caller cannot see
        // are left out of this page and its card.
        restricted,
      };
    },
  );

  // Parametric routes last in reading order (the static /api/wiki/* routes above win in the router anyway).
  app.get(
    '/api/wiki/:channel_id',
    { schema: { params: z.object({ channel_id: z.string().min(1) }), querystring: WikiAsOfQuery } },
    async ({ params, query }) => {
      const w = await wikiAt(params.channel_id, query.as_of);
      return { ...(await w.structure()), overview: await w.page('overview'), ...(await w.mark()) };
    },
  );

  app.get(
    '/api/wiki/:channel_id/topics/:topic_id',
    {
      schema: {
        params: z.object({ channel_id: z.string().min(1), topic_id: z.string().min(1) }),
        querystring: WikiAsOfQuery,
      },
    },
    async ({ params, query }) => {
      const id = params.topic_id.startsWith('topic-') ? params.topic_id : `topic-${params.topic_id}`;
      const w = await wikiAt(params.channel_id, query.as_of);
      const page = await w.page(id);
      if (page.page_type === 'fixed') throw notFound('wiki topic', params.topic_id);
      return { ...page, ...(await w.mark()) };
    },
  );
};
