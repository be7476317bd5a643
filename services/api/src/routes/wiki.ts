import { randomUUID } from 'node:crypto';
import { AtlasError, notFound } from '@atlas/core';
import type { WikiStatus, WikiVersionSummary } from '@atlas/stores';
import type { WikiCitation, WikiGenerateResult, WikiPage, WikiStructure } from '@atlas/wiki';
import type { FastifyPluginAsync } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { ApiPorts } from '../ports.js';
import { entityCard, entityView } from './graph.js';

const Limit = (def: number, max: number) => z.coerce.number().int().min(1).max(max).default(def);
const ChannelQuery = z.object({ channel_id: z.string().min(1) });

/** One generation job of this process (refresh or admin rebuild), kept in memory. */
interface WikiJob {
  job_id: string;
  channel_id: string;
  mode: 'full' | 'incremental';
  status: 'running' | 'completed' | 'failed';
  started_at: string;
  completed_at: string | null;
  result: WikiGenerateResult | null;
  error: { code: string; message: string } | null;
}

/** Jobs kept per channel (newest last) for sync-history, activity durations and status. */
const JOBS_KEPT = 50;

/** Seconds a run is expected to take: the channel's last run, else 1 s per 500 facts (at least 1). */
const estimateSeconds = (status: WikiStatus, facts: number): number =>
  status.last_duration_ms != null
    ? Math.max(1, Math.ceil(status.last_duration_ms / 1000))
    : Math.max(1, Math.ceil(facts / 500));

/**
 * The wiki routes (spec "Wiki"; README "Routes that exist today"): stored structure, pages, versions, status,
 * metadata, activity and generation history of a channel, entity pages from the graph, and the generation jobs
 * (`POST /api/wiki/refresh`, `POST /api/admin/wiki/rebuild`). Reads serve what is stored and never generate (no LLM
 * call); a channel never generated answers 404 saying to POST /api/wiki/refresh. Jobs run in the background of this
 * process; a second job for a channel while one runs answers 409 CONFLICT with the running job's id in details.
 */
export const wikiRoutes: FastifyPluginAsync<ApiPorts> = async (instance, ports) => {
  const app = instance.withTypeProvider<ZodTypeProvider>();
  const { wiki, documents } = ports;
  const jobs = new Map<string, WikiJob[]>();
  const running = new Map<string, WikiJob>();

  const channelOf = async (channelId: string) => {
    const ch = await documents.getChannel(channelId);
    if (!ch) throw notFound('channel', channelId);
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

  const jobOfVersion = (channelId: string, version: number) =>
    jobs.get(channelId)?.find((j) => j.result?.version === version && !j.result.skipped);

  /** A version's duration: from this process's job, else the channel's last run for the current version. */
  const durationOf = (v: WikiVersionSummary, status: WikiStatus): number | null => {
    const job = jobOfVersion(v.channel_id, v.version_number);
    if (job?.result) return job.result.durationMs;
    return v.version_number === status.current_version ? status.last_duration_ms : null;
  };

  /** Starts a generation job in the background; 409 while one runs for the channel, or when its wiki is disabled. */
  const startJob = async (channelId: string, mode: 'full' | 'incremental'): Promise<WikiJob> => {
    const generate = ports.generateWiki;
    if (!generate)
      throw new AtlasError(
        'PROVIDER_UNAVAILABLE',
        'wiki generation needs fact embeddings and there is no vector store (embeddings are off: set EMBEDDING_PROVIDER); stored wiki pages are still served',
      );
    if ((await documents.channelSettings(channelId))?.wiki_enabled === false)
      throw new AtlasError(
        'CONFLICT',
        `the wiki of channel ${channelId} is disabled in its settings: PUT /api/channels/${channelId}/settings with {"wiki_enabled": true} first`,
        { details: { channel_id: channelId, wiki_enabled: false } },
      );
    const busy = running.get(channelId);
    if (busy)
      throw new AtlasError('CONFLICT', `a wiki generation is already running for channel ${channelId}`, {
        details: { job_id: busy.job_id, channel_id: channelId, started_at: busy.started_at },
      });
    const job: WikiJob = {
      job_id: randomUUID(),
      channel_id: channelId,
      mode,
      status: 'running',
      started_at: new Date().toISOString(),
      completed_at: null,
      result: null,
      error: null,
    };
    running.set(channelId, job);
    const list = jobs.get(channelId) ?? [];
    list.push(job);
    if (list.length > JOBS_KEPT) list.shift();
    jobs.set(channelId, list);
    // Status says is_generating from the answer on (generateChannelWiki clears it when done).
    await wiki.setGenerating(channelId, true);
    void generate(channelId, mode)
      .then(async (result) => {
        job.result = result;
        job.status = 'completed';
        // An incremental run that found nothing changed returns before touching the flag set above.
        if (result.skipped) await wiki.setGenerating(channelId, false);
      })
      .catch(async (err: unknown) => {
        job.status = 'failed';
        job.error = {
          code: err instanceof AtlasError ? err.code : 'INTERNAL_ERROR',
          message: err instanceof Error ? err.message : String(err),
        };
        await wiki.setGenerating(channelId, false).catch(() => undefined);
      })
      .finally(() => {
        job.completed_at = new Date().toISOString();
        running.delete(channelId);
      });
    return job;
  };

  /** The job answer: status `started`, job_id, estimated_duration_seconds (spec), plus channel_id and mode. */
  const jobAnswer = async (job: WikiJob, status: WikiStatus) => {
    const { total } = await documents.listMemories({ channelId: job.channel_id, page: 1, limit: 1 });
    return {
      status: 'started' as const,
      job_id: job.job_id,
      estimated_duration_seconds: estimateSeconds(status, total),
      channel_id: job.channel_id,
      mode: job.mode,
    };
  };

  app.get('/api/wiki/structure', { schema: { querystring: ChannelQuery } }, async ({ query }) =>
    structureOf(query.channel_id),
  );

  app.get(
    '/api/wiki/pages/:page_id',
    { schema: { params: z.object({ page_id: z.string().min(1) }), querystring: ChannelQuery } },
    async ({ params, query }) => pageOf(query.channel_id, params.page_id),
  );

  app.get('/api/wiki/status', { schema: { querystring: ChannelQuery } }, async ({ query }) => {
    await channelOf(query.channel_id);
    const [status, [current]] = await Promise.all([wiki.status(query.channel_id), wiki.versions(query.channel_id, 1)]);
    const job = running.get(query.channel_id);
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

  app.get('/api/wiki/metadata', { schema: { querystring: ChannelQuery } }, async ({ query }) => {
    const structure = await structureOf(query.channel_id);
    const status = await wiki.status(query.channel_id);
    const current =
      status.current_version == null ? null : await wiki.version(query.channel_id, status.current_version);
    const pages = current?.pages ?? (await wiki.pages(query.channel_id));
    const byType = (t: WikiPage['page_type']) => pages.filter((p) => p.page_type === t).length;
    return {
      channel_id: structure.channel_id,
      channel_name: structure.channel_name,
      platform: structure.platform,
      generated_at: structure.generated_at,
      is_stale: status.is_stale,
      is_generating: status.is_generating,
      current_version: status.current_version,
      model: current?.model ?? null,
      page_count: pages.length,
      topic_count: byType('topic'),
      sub_topic_count: byType('sub-topic'),
      citation_count: pages.reduce((n, p) => n + p.citations.length, 0),
      last_duration_ms: status.last_duration_ms,
      generation: current?.metadata ?? {},
    };
  });

  app.get(
    '/api/wiki/activity',
    { schema: { querystring: z.object({ channel_id: z.string().min(1).optional(), limit: Limit(20, 200) }) } },
    async ({ query }) => {
      const channelIds = query.channel_id
        ? [(await channelOf(query.channel_id)).id]
        : (await documents.listChannels()).map((c) => c.id);
      const activities = [];
      for (const channelId of channelIds) {
        const [versions, status] = await Promise.all([wiki.versions(channelId, query.limit), wiki.status(channelId)]);
        for (const v of versions)
          activities.push({
            channel_id: channelId,
            action: 'generated',
            version_number: v.version_number,
            page_count: v.page_count,
            duration_ms: durationOf(v, status),
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
        status: 'running' | 'completed' | 'failed';
        mode: string | null;
        version_number: number | null;
        pages_generated: number;
        facts_processed: number;
        error: { code: string; message: string } | null;
      }[] = [];
      // Runs of this process that saved no version: running, failed, or incremental with nothing changed (skipped).
      for (const j of jobs.get(channelId) ?? [])
        if (j.status !== 'completed' || j.result?.skipped)
          history.push({
            sync_id: j.job_id,
            started_at: j.started_at,
            completed_at: j.completed_at,
            status: j.status,
            mode: j.mode,
            version_number: j.result?.version ?? null,
            pages_generated: 0,
            facts_processed: j.result?.facts ?? 0,
            error: j.error,
          });
      // Every saved version is one completed run.
      for (const v of await wiki.versions(channelId, query.limit)) {
        const snap = await wiki.version(channelId, v.version_number);
        const meta = snap?.metadata ?? {};
        const job = jobOfVersion(channelId, v.version_number);
        const ms = durationOf(v, status);
        history.push({
          sync_id: job?.job_id ?? `${channelId}:v${v.version_number}`,
          started_at: job?.started_at ?? v.generated_at,
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
      const job = await startJob(body.channel_id, exists && !body.force ? 'incremental' : 'full');
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
        const job = await startJob(body.channel_id, 'full');
        return reply.status(202).send(await jobAnswer(job, status));
      }
      // Every channel with facts and no run in progress: one job each.
      const started = [];
      let seconds = 0;
      for (const ch of await documents.listChannels()) {
        if (running.has(ch.id) || (await documents.channelSettings(ch.id))?.wiki_enabled === false) continue;
        const { total } = await documents.listMemories({ channelId: ch.id, page: 1, limit: 1 });
        if (total === 0) continue;
        const status = await wiki.status(ch.id);
        const job = await startJob(ch.id, 'full');
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
    async ({ params }) => {
      const e = await ports.graph.getEntity(params.entity_id);
      if (!e || e.type.toLowerCase() !== params.entity_type.toLowerCase())
        throw notFound(`${params.entity_type} entity`, params.entity_id);
      const card = await entityCard(ports.graph, documents, e.name);
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
      };
    },
  );

  // Parametric routes last in reading order (the static /api/wiki/* routes above win in the router anyway).
  app.get(
    '/api/wiki/:channel_id',
    { schema: { params: z.object({ channel_id: z.string().min(1) }) } },
    async ({ params }) => {
      const structure = await structureOf(params.channel_id);
      return { ...structure, overview: await pageOf(params.channel_id, 'overview') };
    },
  );

  app.get(
    '/api/wiki/:channel_id/topics/:topic_id',
    { schema: { params: z.object({ channel_id: z.string().min(1), topic_id: z.string().min(1) }) } },
    async ({ params }) => {
      const id = params.topic_id.startsWith('topic-') ? params.topic_id : `topic-${params.topic_id}`;
      const page = await pageOf(params.channel_id, id);
      if (page.page_type === 'fixed') throw notFound('wiki topic', params.topic_id);
      return page;
    },
  );
};
