import { sql } from 'kysely';
import type {
  ActivityRow,
  ChannelStatsRow,
  ExportChannelRow,
  LlmUsageRecord,
  LlmUsageTotals,
  SystemStatsRow,
  TopAuthorRow,
  TopTopicRow,
} from './types.js';
import { StatsWriter } from './writes.js';

export * from './types.js';

/**
 * The trend rule of top topics (docs/stats-and-metrics.md "Trend rule"): a topic's facts in the 7 days ending at the newest fact
 * of the scope (`recent`) against the 7 days before (`previous`), by the facts' message time. `rising` when
 * recent ≥ 1.5 × previous and recent − previous ≥ 2; `falling` when previous ≥ 1.5 × recent and previous − recent ≥ 2;
 * else `stable`. Anchoring at the newest fact (not the wall clock) keeps an imported history meaningful. Pure.
 */
export const topicTrend = (recent: number, previous: number): 'rising' | 'falling' | 'stable' => {
  if (recent >= 1.5 * previous && recent - previous >= 2) return 'rising';
  if (previous >= 1.5 * recent && previous - recent >= 2) return 'falling';
  return 'stable';
};

const DAY_MS = 86_400_000;
const num = (v: unknown): number => Number(v ?? 0);
const iso = (v: unknown): string | null => (v === null || v === undefined ? null : new Date(v as string).toISOString());

/**
 * The stats read store (spec "Statistics and health objects", "Activity feed"), over Postgres or PGlite through
 * Kysely: the writes of StatsWriter (made by the stats projector, one per kind of event) and the reads, which
 * aggregate in SQL (raw SQL where they need FILTER, correlated subqueries, jsonb functions or unions the builder
 * cannot say plainly). Errors are the database's (a store down throws).
 */
export class StatsStore extends StatsWriter {
  /**
   * Spec "System stats" (without wiki_pages): live messages, their distinct authors, facts, decision facts, entities;
   * `channels` (a restricted caller's visible channels, docs/access.md) counts only those.
   */
  async system(channels?: readonly string[]): Promise<SystemStatsRow> {
    const cs = channels ? [...channels] : null;
    const r = (
      await sql<Record<string, unknown>>`select
        (select count(*) from stats_channels where (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as channels,
        (select count(*) from stats_messages where not deleted and (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as messages,
        (select count(distinct author_id) from stats_messages where not deleted and (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as authors,
        (select count(*) from stats_facts where (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as facts,
        (select count(*) from stats_facts where fact_type = 'decision' and (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as decisions,
        (select count(distinct entity_id) from stats_entities where (${cs}::text[] is null or channel_id = any(${cs}::text[]))) as entities`.execute(
        this.db,
      )
    ).rows[0]!;
    return {
      total_facts: num(r.facts),
      total_entities: num(r.entities),
      total_channels: num(r.channels),
      total_decisions: num(r.decisions),
      total_messages: num(r.messages),
      total_authors: num(r.authors),
    };
  }

  /** Ids and names of the channels the store knows, by name. */
  async channels(): Promise<{ channel_id: string; name: string; platform: string }[]> {
    const { rows } = await sql<{ channel_id: string; name: string; platform: string }>`
      select channel_id, name, platform from stats_channels order by name, channel_id`.execute(this.db);
    return rows;
  }

  /**
   * One channel's figures (spec "Channel stats"), or null when the channel is unknown. The activity windows are the
   * 7 and 30 days before `now`: messages by message time, facts by extraction time (when they were added).
   */
  async channel(channelId: string, now: Date = new Date()): Promise<ChannelStatsRow | null> {
    const d7 = new Date(now.getTime() - 7 * DAY_MS).toISOString();
    const d30 = new Date(now.getTime() - 30 * DAY_MS).toISOString();
    const { rows } = await sql<Record<string, unknown>>`select c.channel_id, c.name, c.platform,
        (select count(*) from stats_messages m where m.channel_id = c.channel_id and not m.deleted) as messages,
        (select count(distinct author_id) from stats_messages m where m.channel_id = c.channel_id and not m.deleted)
          as authors,
        (select min(ts) from stats_messages m where m.channel_id = c.channel_id and not m.deleted) as earliest,
        (select max(ts) from stats_messages m where m.channel_id = c.channel_id and not m.deleted) as latest,
        (select count(*) from stats_messages m where m.channel_id = c.channel_id and not m.deleted
          and m.ts >= ${d7}::timestamptz) as messages_7d,
        (select count(*) from stats_messages m where m.channel_id = c.channel_id and not m.deleted
          and m.ts >= ${d30}::timestamptz) as messages_30d,
        (select count(*) from stats_facts f where f.channel_id = c.channel_id) as facts,
        (select count(*) from stats_facts f where f.channel_id = c.channel_id and f.fact_type = 'decision')
          as decisions,
        (select count(*) from stats_facts f where f.channel_id = c.channel_id
          and f.extracted_at >= ${d7}::timestamptz) as facts_7d,
        (select count(*) from stats_facts f where f.channel_id = c.channel_id
          and f.extracted_at >= ${d30}::timestamptz) as facts_30d,
        (select count(distinct entity_id) from stats_entities e where e.channel_id = c.channel_id) as entities
      from stats_channels c where c.channel_id = ${channelId}`.execute(this.db);
    const r = rows[0];
    if (!r) return null;
    return {
      channel_id: r.channel_id as string,
      channel_name: r.name as string,
      platform: r.platform as string,
      message_count: num(r.messages),
      fact_count: num(r.facts),
      entity_count: num(r.entities),
      decision_count: num(r.decisions),
      author_count: num(r.authors),
      date_range: { earliest: iso(r.earliest), latest: iso(r.latest) },
      activity: {
        messages_last_7d: num(r.messages_7d),
        messages_last_30d: num(r.messages_30d),
        facts_added_last_7d: num(r.facts_7d),
        facts_added_last_30d: num(r.facts_30d),
      },
    };
  }

  /**
   * Authors by live messages (then facts, then name), at most `limit`, over every channel or one: message, fact and
   * decision-fact counts and the names of the channels they wrote in (sorted).
   */
  async topAuthors(q: {
    channelId?: string | undefined;
    channels?: readonly string[] | undefined;
    limit: number;
  }): Promise<TopAuthorRow[]> {
    const ch = q.channelId ?? null;
    const cs = q.channels ? [...q.channels] : null;
    const { rows } = await sql<Record<string, unknown>>`
      with m as (
        select author_id, count(*) as messages, max(author_name) as name,
          jsonb_agg(distinct coalesce(c.name, s.channel_id)) as channels
        from stats_messages s left join stats_channels c on c.channel_id = s.channel_id
        where not s.deleted and (${ch}::text is null or s.channel_id = ${ch}::text) and (${cs}::text[] is null or s.channel_id = any(${cs}::text[]))
        group by author_id),
      f as (
        select author_id, count(*) as facts, count(*) filter (where fact_type = 'decision') as decisions
        from stats_facts where (${ch}::text is null or channel_id = ${ch}::text) and (${cs}::text[] is null or channel_id = any(${cs}::text[]))
        group by author_id)
      select m.author_id, m.name, m.messages, m.channels, coalesce(f.facts, 0) as facts,
        coalesce(f.decisions, 0) as decisions
      from m left join f on f.author_id = m.author_id
      order by m.messages desc, coalesce(f.facts, 0) desc, m.name, m.author_id
      limit ${q.limit}`.execute(this.db);
    return rows.map((r) => ({
      author_id: r.author_id as string,
      author_name: r.name as string,
      message_count: num(r.messages),
      fact_count: num(r.facts),
      decision_count: num(r.decisions),
      channels: [...(typeof r.channels === 'string' ? JSON.parse(r.channels) : (r.channels as string[]))].sort(),
    }));
  }

  /**
   * Topic tags by facts (then name), at most `limit`, over every channel or one, with their channels' names and the
   * trend of `topicTrend` (windows anchored at the newest fact's message time in the scope).
   */
  async topTopics(q: {
    channelId?: string | undefined;
    channels?: readonly string[] | undefined;
    limit: number;
  }): Promise<TopTopicRow[]> {
    const ch = q.channelId ?? null;
    const cs = q.channels ? [...q.channels] : null;
    const { rows } = await sql<Record<string, unknown>>`
      with anchor as (select max(message_ts) as t from stats_facts
          where (${ch}::text is null or channel_id = ${ch}::text) and (${cs}::text[] is null or channel_id = any(${cs}::text[]))),
        t as (
          select jsonb_array_elements_text(f.topic_tags) as topic, f.channel_id, f.message_ts
          from stats_facts f where (${ch}::text is null or f.channel_id = ${ch}::text) and (${cs}::text[] is null or f.channel_id = any(${cs}::text[])))
      select t.topic, count(*) as facts,
        jsonb_agg(distinct coalesce(c.name, t.channel_id)) as channels,
        count(*) filter (where t.message_ts > (select t from anchor) - interval '7 days') as recent,
        count(*) filter (where t.message_ts <= (select t from anchor) - interval '7 days'
          and t.message_ts > (select t from anchor) - interval '14 days') as previous
      from t left join stats_channels c on c.channel_id = t.channel_id
      group by t.topic
      order by count(*) desc, t.topic
      limit ${q.limit}`.execute(this.db);
    return rows.map((r) => ({
      topic: r.topic as string,
      fact_count: num(r.facts),
      channels: [...(typeof r.channels === 'string' ? JSON.parse(r.channels) : (r.channels as string[]))].sort(),
      trend: topicTrend(num(r.recent), num(r.previous)),
      recent_count: num(r.recent),
      previous_count: num(r.previous),
    }));
  }

  /**
   * The newest `limit` activity entries the store knows, newest first: `sync_completed` per completed sync job,
   * and per channel and UTC hour of extraction, one `fact_extracted` (messages whose current fact set was extracted
   * then, with their facts) and one `entity_created` (entities first seen then, and the messages naming them).
   * `channels` (a restricted caller's visible channels): entries of those channels only.
   */
  async activity(limit: number, channels?: readonly string[]): Promise<ActivityRow[]> {
    const cs = channels ? [...channels] : null;
    const { rows } = await sql<Record<string, unknown>>`
      (select 'fact_extracted' as type, max(extracted_at) as ts, channel_id, count(distinct message_id) as messages,
          count(*) as facts, null::bigint as entities, null as job_id
        from stats_facts where (${cs}::text[] is null or channel_id = any(${cs}::text[])) group by channel_id, date_trunc('hour', extracted_at at time zone 'UTC')
        order by ts desc limit ${limit})
      union all
      (select 'entity_created', max(first_seen_at), e.channel_id,
          (select count(distinct s.message_id) from stats_entities s
            where s.entity_id = any(array_agg(e.entity_id))),
          null, count(*), null
        from stats_entity_first e where (${cs}::text[] is null or e.channel_id = any(${cs}::text[])) group by e.channel_id, date_trunc('hour', e.first_seen_at at time zone 'UTC')
        order by 2 desc limit ${limit})
      union all
      (select 'sync_completed', completed_at, channel_id, messages_synced, facts_extracted, entities_created, job_id
        from stats_sync_jobs where status = 'completed' and completed_at is not null and (${cs}::text[] is null or channel_id = any(${cs}::text[]))
        order by completed_at desc limit ${limit})
      order by ts desc, type limit ${limit}`.execute(this.db);
    return rows.map((r) => {
      const type = r.type as ActivityRow['type'];
      const base: ActivityRow = {
        type,
        timestamp: iso(r.ts)!,
        channel_id: r.channel_id as string,
        message_count: num(r.messages),
      };
      if (type === 'fact_extracted') return { ...base, fact_count: num(r.facts) };
      if (type === 'entity_created') return { ...base, entity_count: num(r.entities) };
      return {
        ...base,
        job_id: r.job_id as string,
        fact_count: num(r.facts),
        entity_count: num(r.entities),
      };
    });
  }

  /** Mean duration of completed sync jobs (completed_at − started_at), seconds; 0 when none completed. */
  async avgSyncDurationSeconds(): Promise<number> {
    const r = (
      await sql<{ s: unknown }>`select avg(extract(epoch from (completed_at - started_at))) as s from stats_sync_jobs
        where status = 'completed' and completed_at is not null and started_at is not null`.execute(this.db)
    ).rows[0];
    return Math.round(num(r?.s) * 100) / 100;
  }

  /**
   * One row per channel (or the one channel) for GET /api/stats/export, by channel name. With `since` (ISO 8601),
   * messages count by message time and facts by their message's time at or after it; entities are the channel's.
   * `channels` (a restricted caller's visible channels): rows of those channels only.
   */
  async exportRows(q: {
    channelId?: string | undefined;
    channels?: readonly string[] | undefined;
    since?: string | undefined;
  }): Promise<ExportChannelRow[]> {
    const ch = q.channelId ?? null;
    const cs = q.channels ? [...q.channels] : null;
    const since = q.since ?? null;
    const { rows } = await sql<Record<string, unknown>>`select c.channel_id, c.name, c.platform,
        coalesce(m.messages, 0) as messages, coalesce(m.authors, 0) as authors, m.earliest, m.latest,
        coalesce(f.facts, 0) as facts, coalesce(f.decisions, 0) as decisions, coalesce(f.high, 0) as high,
        coalesce(f.quality, 0) as quality, coalesce(e.entities, 0) as entities
      from stats_channels c
      left join (select channel_id, count(*) as messages, count(distinct author_id) as authors, min(ts) as earliest,
          max(ts) as latest from stats_messages where not deleted
          and (${since}::timestamptz is null or ts >= ${since}::timestamptz) group by channel_id) m
        on m.channel_id = c.channel_id
      left join (select channel_id, count(*) as facts, count(*) filter (where fact_type = 'decision') as decisions,
          count(*) filter (where importance = 'high') as high, avg(quality) as quality from stats_facts
          where (${since}::timestamptz is null or message_ts >= ${since}::timestamptz) group by channel_id) f
        on f.channel_id = c.channel_id
      left join (select channel_id, count(distinct entity_id) as entities from stats_entities group by channel_id) e
        on e.channel_id = c.channel_id
      where (${ch}::text is null or c.channel_id = ${ch}::text) and (${cs}::text[] is null or c.channel_id = any(${cs}::text[]))
      order by c.name, c.channel_id`.execute(this.db);
    return rows.map((r) => ({
      channel_id: r.channel_id as string,
      channel_name: r.name as string,
      platform: r.platform as string,
      message_count: num(r.messages),
      author_count: num(r.authors),
      fact_count: num(r.facts),
      decision_count: num(r.decisions),
      high_importance_facts: num(r.high),
      avg_fact_quality_score: Math.round(num(r.quality) * 1000) / 1000,
      entity_count: num(r.entities),
      earliest_message: iso(r.earliest),
      latest_message: iso(r.latest),
    }));
  }

  /**
   * Wiki figures across channels in one query each, read from the wiki store's own tables (wiki_pages, wiki_versions,
   * wiki_state; packages/stores/src/wiki, same database) instead of one WikiStore call per channel: pages of each
   * channel's current wiki. Empty when the wiki tables do not exist.
   */
  async wikiPageCounts(): Promise<Map<string, number>> {
    if (!(await this.hasTable('wiki_pages'))) return new Map();
    const { rows } = await sql<{ channel_id: string; n: unknown }>`select channel_id, count(*) as n from wiki_pages
      group by channel_id`.execute(this.db);
    return new Map(rows.map((r) => [r.channel_id, num(r.n)]));
  }

  /**
   * The newest `limit` wiki versions of every channel (or of `channels`, a restricted caller's), newest first (see
   * wikiPageCounts).
   */
  async wikiVersions(
    limit: number,
    channels?: readonly string[],
  ): Promise<{ channel_id: string; version_number: number; generated_at: string; page_count: number }[]> {
    if (!(await this.hasTable('wiki_versions'))) return [];
    const cs = channels ? [...channels] : null;
    const { rows } = await sql<Record<string, unknown>>`select channel_id, version_number, generated_at, page_count
      from wiki_versions where (${cs}::text[] is null or channel_id = any(${cs}::text[])) order by generated_at desc, channel_id limit ${limit}`.execute(
      this.db,
    );
    return rows.map((r) => ({
      channel_id: r.channel_id as string,
      version_number: num(r.version_number),
      generated_at: iso(r.generated_at)!,
      page_count: num(r.page_count),
    }));
  }

  /** Mean of each channel's last wiki generation time (wiki_state.last_duration_ms), seconds; 0 when none. */
  async avgWikiGenerationSeconds(): Promise<number> {
    if (!(await this.hasTable('wiki_state'))) return 0;
    const r = (
      await sql<{ s: unknown }>`select avg(last_duration_ms) / 1000.0 as s from wiki_state
        where last_duration_ms is not null`.execute(this.db)
    ).rows[0];
    return Math.round(num(r?.s) * 100) / 100;
  }

  private async hasTable(name: string): Promise<boolean> {
    const r = await sql<{ t: unknown }>`select to_regclass(${name}) as t`.execute(this.db);
    return r.rows[0]?.t !== null && r.rows[0]?.t !== undefined;
  }

  /**
   * The dead-letter depth per consumer group and topic: dead-lettered events not re-driven since (a group whose dead
   * letters were all re-driven is listed with 0).
   */
  async deadLetters(): Promise<{ group: string; topic: string; count: number }[]> {
    const { rows } = await sql<{ g: string; topic: string; n: unknown }>`select dl_group as g, topic,
        count(*) filter (where redriven_at is null) as n
      from stats_dead_letters group by dl_group, topic order by dl_group, topic`.execute(this.db);
    return rows.map((r) => ({ group: r.g, topic: r.topic, count: num(r.n) }));
  }

  /** Adds one LLM call to the ledger (per UTC day, tier, provider and model). Not idempotent: call once per call. */
  async recordLlmUsage(u: LlmUsageRecord): Promise<void> {
    const day = (u.at ?? new Date()).toISOString().slice(0, 10);
    await sql`insert into stats_llm_usage (day, tier, provider, model, calls, failed_calls, prompt_tokens,
        completion_tokens, estimated_token_calls, cost_usd)
      values (${day}::date, ${u.tier}, ${u.provider}, ${u.model}, 1, ${u.failed ? 1 : 0}, ${u.promptTokens},
        ${u.completionTokens}, ${u.estimated ? 1 : 0}, ${u.costUsd})
      on conflict (day, tier, provider, model) do update set calls = stats_llm_usage.calls + 1,
        failed_calls = stats_llm_usage.failed_calls + excluded.failed_calls,
        prompt_tokens = stats_llm_usage.prompt_tokens + excluded.prompt_tokens,
        completion_tokens = stats_llm_usage.completion_tokens + excluded.completion_tokens,
        estimated_token_calls = stats_llm_usage.estimated_token_calls + excluded.estimated_token_calls,
        cost_usd = stats_llm_usage.cost_usd + excluded.cost_usd`.execute(this.db);
  }

  /** LLM usage since the ledger began: calls (failed ones included), tokens, estimated cost in USD. */
  async llmUsage(): Promise<LlmUsageTotals> {
    const { rows } = await sql<Record<string, unknown>>`select tier, provider, model, sum(calls) as calls,
        sum(failed_calls) as failed, sum(prompt_tokens) as prompt, sum(completion_tokens) as completion,
        sum(cost_usd) as cost
      from stats_llm_usage group by tier, provider, model order by tier, provider, model`.execute(this.db);
    const by = rows.map((r) => ({
      tier: r.tier as string,
      provider: r.provider as string,
      model: r.model as string,
      calls: num(r.calls),
      failed_calls: num(r.failed),
      prompt_tokens: num(r.prompt),
      completion_tokens: num(r.completion),
      cost_usd: num(r.cost),
    }));
    const sum = (k: 'calls' | 'failed_calls' | 'prompt_tokens' | 'completion_tokens' | 'cost_usd') =>
      by.reduce((s, r) => s + r[k], 0);
    return {
      total_llm_calls: sum('calls'),
      failed_llm_calls: sum('failed_calls'),
      prompt_tokens: sum('prompt_tokens'),
      completion_tokens: sum('completion_tokens'),
      total_llm_tokens: sum('prompt_tokens') + sum('completion_tokens'),
      estimated_cost_usd: Math.round(sum('cost_usd') * 1e6) / 1e6,
      by_model: by,
    };
  }
}
