import { type Kysely, type RawBuilder, sql } from 'kysely';
import { factFilterSql } from '../fact-filters.js';
import type { KeywordDoc, KeywordHit, KeywordIndex, KeywordQuery, KeywordResult } from './port.js';

const CHUNK = 500;
const HEADLINE_OPTS =
  'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=10, FragmentDelimiter=@@@';
const MATCH_ALL = /^\s*\*?\s*$/;
const WEBSEARCH_SYNTAX = /"|\s-\w|\bOR\b/;

/** Query words worth a typo-tolerant match (letters/digits, 3+ characters). */
const fuzzyWords = (query: string): string[] =>
  [...new Set(query.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}._-]{2,}/gu) ?? [])].slice(0, 8);

/**
 * Keyword index on Postgres full text: an English tsvector per fact (GIN), ts_rank_cd for ranking,
 * ts_headline for `<mark>` highlights, pg_trgm word_similarity for typo tolerance, and the tsquery
 * distance operator for proximity. Runs on PGlite and on a PostgreSQL server alike.
 */
export class PostgresKeywordIndex implements KeywordIndex {
  constructor(private readonly db: Kysely<unknown>) {}

  async truncate(): Promise<void> {
    await sql`truncate table keyword_facts`.execute(this.db);
  }

  async replaceForMessages(sets: readonly { messageId: string; docs: readonly KeywordDoc[] }[]): Promise<void> {
    if (sets.length === 0) return;
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    await this.db.transaction().execute(async (trx) => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const ids = chunk.map((s) => s.messageId);
        const keep = chunk.flatMap((s) => s.docs.map((d) => d.factId));
        const keepClause = keep.length > 0 ? sql`and fact_id <> all(${keep}::uuid[])` : sql``;
        await sql`delete from keyword_facts where message_id = any(${ids}::uuid[]) ${keepClause}`.execute(trx);
        const docs = chunk.flatMap((s) => s.docs);
        if (docs.length === 0) continue;
        const values = docs.map(
          (d) =>
            sql`(${d.factId}::uuid, ${d.messageId}::uuid, ${d.channelId}, ${d.text}, ${d.factType}, ${d.importance},
                 ${d.topicTags}::text[], ${d.entityTags}::text[], ${d.authorName}, ${d.messageTs}::timestamptz, ${d.qualityScore})`,
        );
        await sql`insert into keyword_facts (fact_id, message_id, channel_id, text, fact_type, importance, topic_tags,
            entity_tags, author_name, message_ts, quality_score) values ${sql.join(values)}
          on conflict (fact_id) do update set text = excluded.text, channel_id = excluded.channel_id,
            fact_type = excluded.fact_type, importance = excluded.importance, topic_tags = excluded.topic_tags,
            entity_tags = excluded.entity_tags, author_name = excluded.author_name, message_ts = excluded.message_ts,
            quality_score = excluded.quality_score`.execute(trx);
      }
    });
  }

  async search(q: KeywordQuery): Promise<KeywordResult> {
    const filters = this.filterSql(q);
    if (MATCH_ALL.test(q.query)) {
      const rows = await sql<{ fact_id: string }>`select fact_id from keyword_facts where ${filters}
        order by quality_score desc, message_ts desc, fact_id limit ${q.limit}`.execute(this.db);
      return {
        hits: rows.rows.map((r) => ({ factId: r.fact_id, score: 1, highlights: [] })),
        total: await this.count(filters),
        ...(q.facets?.length ? { facets: await this.facets(filters, q.facets) } : {}),
      };
    }
    const tsq = await this.tsquery(q);
    const words = q.fuzzy ? fuzzyWords(q.query) : [];
    const fuzzy = words.length > 0 ? this.fuzzySql(words, q.fuzziness) : sql`false`;
    const match = sql`(tsv @@ ${tsq} or ${fuzzy}) and ${filters}`;
    const rows = await sql<{ fact_id: string; text: string; rank: number; exact: boolean; headline: string }>`
      select fact_id, text, exact, rank, case when exact then ts_headline('english', text, ${tsq}, ${HEADLINE_OPTS}) else '' end as headline
      from (select fact_id, text, tsv @@ ${tsq} as exact,
              ts_rank_cd(tsv, ${tsq}, 32) + ${words.length > 0 ? sql`0.05 * ${this.similaritySql(words)}` : sql`0`} as rank
            from keyword_facts where ${match}) m
      order by rank desc, fact_id limit ${q.limit}`.execute(this.db);
    const best = Math.max(...rows.rows.map((r) => Number(r.rank)), Number.EPSILON);
    const hits: KeywordHit[] = rows.rows.map((r) => ({
      factId: r.fact_id,
      score: Math.min(1, Number(r.rank) / best),
      highlights: r.exact ? splitHeadline(r.headline) : markSimilar(r.text, words),
    }));
    return {
      hits,
      total: await this.count(match),
      ...(q.facets?.length ? { facets: await this.facets(match, q.facets) } : {}),
    };
  }

  /** OR of the query's terms (natural questions rarely contain every word), or web-search syntax when used; with proximity, terms within N words. */
  private async tsquery(q: KeywordQuery): Promise<RawBuilder<unknown>> {
    if (q.proximity && q.proximity > 0) {
      const lex = await sql<{
        lexeme: string;
      }>`select lexeme from unnest(to_tsvector('english', ${q.query})) order by positions[1]`.execute(this.db);
      const terms = lex.rows.map((r) => `'${r.lexeme.replaceAll("'", "''")}'`);
      if (terms.length >= 2) {
        const n = Math.min(q.proximity, 20);
        const pairs = terms.slice(1).map((b, i) => {
          const a = terms[i]!;
          const alts = Array.from({ length: n }, (_, d) => [`${a} <${d + 1}> ${b}`, `${b} <${d + 1}> ${a}`]).flat();
          return `(${alts.join(' | ')})`;
        });
        return sql`${pairs.join(' & ')}::tsquery`;
      }
    }
    if (WEBSEARCH_SYNTAX.test(q.query)) return sql`websearch_to_tsquery('english', ${q.query})`;
    return sql`replace(plainto_tsquery('english', ${q.query})::text, ' & ', ' | ')::tsquery`;
  }

  private fuzzySql(words: string[], fuzziness = 'AUTO'): RawBuilder<unknown> {
    const threshold = fuzziness === '2' ? 0.4 : fuzziness === '1' ? 0.6 : null;
    const parts = words.map((w) => {
      const t = threshold ?? (w.length <= 4 ? 0.75 : w.length <= 7 ? 0.6 : 0.5);
      return t >= 0.6
        ? sql`(${w} <% text and word_similarity(${w}, text) >= ${t})`
        : sql`word_similarity(${w}, text) >= ${t}`;
    });
    return sql`(${sql.join(parts, sql` or `)})`;
  }

  private similaritySql(words: string[]): RawBuilder<unknown> {
    return sql`greatest(${sql.join(words.map((w) => sql`word_similarity(${w}, text)`))})`;
  }

  private filterSql(q: KeywordQuery): RawBuilder<unknown> {
    return factFilterSql(q.channelId, q.filters);
  }

  private async count(where: RawBuilder<unknown>): Promise<number> {
    const r = await sql<{ n: number }>`select count(*)::int as n from keyword_facts where ${where}`.execute(this.db);
    return Number(r.rows[0]?.n ?? 0);
  }

  private async facets(
    where: RawBuilder<unknown>,
    names: readonly string[],
  ): Promise<Record<string, Record<string, number>>> {
    const out: Record<string, Record<string, number>> = {};
    for (const name of names) {
      const expr =
        name === 'fact_type' ? sql`fact_type` : name === 'importance' ? sql`importance` : sql`unnest(topic_tags)`;
      const r = await sql<{
        v: string;
        n: number;
      }>`select v, count(*)::int as n from (select ${expr} as v from keyword_facts where ${where}) x
        group by v order by n desc, v limit 50`.execute(this.db);
      out[name] = Object.fromEntries(r.rows.map((x) => [x.v, Number(x.n)]));
    }
    return out;
  }
}

const splitHeadline = (h: string): string[] =>
  h
    .split('@@@')
    .map((s) => s.trim())
    .filter((s) => s.includes('<mark>'));

/** Highlights for typo-tolerant hits: words sharing most characters with a query word get `<mark>`. */
const markSimilar = (text: string, words: string[]): string[] => {
  const near = (token: string) => words.some((w) => editDistance(token.toLowerCase(), w) <= (w.length <= 4 ? 1 : 2));
  const marked = text.replace(/[\p{L}\p{N}][\p{L}\p{N}._-]*/gu, (t) => (near(t) ? `<mark>${t}</mark>` : t));
  return marked.includes('<mark>') ? [marked.length > 300 ? `${marked.slice(0, 300)}…` : marked] : [];
};

const editDistance = (a: string, b: string): number => {
  if (Math.abs(a.length - b.length) > 2) return 3;
  const prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = prev[j]!;
      prev[j] = Math.min(prev[j]! + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = tmp;
    }
  }
  return prev[b.length]!;
};
