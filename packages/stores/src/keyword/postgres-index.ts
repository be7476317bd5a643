import type { DatabaseHandle } from '@atlas/db';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { factFilterSql } from '../fact-filters.js';
import type { KeywordCountQuery, KeywordDoc, KeywordHit, KeywordIndex, KeywordQuery, KeywordResult } from './port.js';
import type { KeywordTables } from './tables.js';

const CHUNK = 500;
const HEADLINE_OPTS =
  'StartSel=<mark>, StopSel=</mark>, MaxFragments=2, MaxWords=30, MinWords=10, FragmentDelimiter=@@@';
const MATCH_ALL = /^\s*\*?\s*$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** BM25 parameters (the usual defaults, as Elasticsearch's). */
const K1 = 1.2;
const B = 0.75;
/** A query term in more than this share of all facts does not select candidates on its own. */
const COMMON_SHARE = 0.1;
/**
 * Candidates are the facts holding one of the rarest query terms whose document frequencies add up to at most this
 * many facts (at least the rarest term always selects); every query term still counts in each candidate's BM25.
 * A fact holding only the more common terms scores at most their idf sum, below what the rare terms give, so the top
 * of the ranking stays, and the scan does not score every fact holding a common word (thousands of facts per term
 * in a large index). Smaller indexes are not affected.
 */
const SELECT_BUDGET = 2_000;

interface QueryTerm {
  lexeme: string;
  df: number;
  docs: number;
  idf: number;
  avgdl: number;
}
const WEBSEARCH_SYNTAX = /"|\s-\w|\bOR\b/;

/** Query words worth a typo-tolerant match (letters/digits, 3+ characters). */
const fuzzyWords = (query: string): string[] =>
  [...new Set(query.toLowerCase().match(/[\p{L}\p{N}][\p{L}\p{N}._-]{2,}/gu) ?? [])].slice(0, 8);

/**
 * Keyword index on Postgres full text: an English tsvector per fact (GIN), BM25 for ranking (idf from
 * the keyword_terms statistics the table's triggers keep; the fact's text weighs 1, its context 0.5),
 * ts_headline for `<mark>` highlights, pg_trgm word_similarity for typo tolerance, and the tsquery
 * distance operator for proximity. Runs on PGlite and on a PostgreSQL server alike.
 */
export class PostgresKeywordIndex implements KeywordIndex {
  private readonly selectBudget: number;
  /**
   * The searches stay raw SQL: BM25 over the tsvector and the trigger-kept term statistics, ts_headline, pg_trgm's
   * word_similarity and tsquery operators are nothing the builder has; the writes use uuid[] arrays the same way.
   */
  private readonly db: Kysely<KeywordTables>;

  /** `opts.selectBudget`: SELECT_BUDGET (facts; tests set it small to exercise the rare-term selection). */
  constructor(db: DatabaseHandle['db'], opts: { selectBudget?: number } = {}) {
    this.db = db.withTables<KeywordTables>();
    this.selectBudget = opts.selectBudget ?? SELECT_BUDGET;
  }

  async truncate(): Promise<void> {
    // Raw: the builder has no truncate.
    await sql`truncate table keyword_facts, keyword_terms`.execute(this.db);
    await this.db.updateTable('keyword_stats').set({ docs: 0, tokens: 0 }).execute();
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
            sql`(${d.factId}::uuid, ${d.messageId}::uuid, ${d.channelId}, ${d.text}, ${d.context}, ${d.factType}, ${d.importance},
                 ${d.topicTags}::text[], ${d.entityTags}::text[], ${d.authorName}, ${d.messageTs}::timestamptz, ${d.qualityScore})`,
        );
        await sql`insert into keyword_facts (fact_id, message_id, channel_id, text, context, fact_type, importance,
            topic_tags, entity_tags, author_name, message_ts, quality_score) values ${sql.join(values)}
          on conflict (fact_id) do update set text = excluded.text, context = excluded.context, channel_id = excluded.channel_id,
            fact_type = excluded.fact_type, importance = excluded.importance, topic_tags = excluded.topic_tags,
            entity_tags = excluded.entity_tags, author_name = excluded.author_name, message_ts = excluded.message_ts,
            quality_score = excluded.quality_score`.execute(trx);
      }
    });
  }

  /** The table's triggers keep the BM25 term statistics (keyword_terms, keyword_stats) in step with the delete. */
  async deleteChannel(channelId: string): Promise<number> {
    const r = await this.db.deleteFrom('keyword_facts').where('channel_id', '=', channelId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }

  async search(q: KeywordQuery): Promise<KeywordResult> {
    const filters = this.filterSql(q);
    if (MATCH_ALL.test(q.query)) {
      const rows = await sql<{ fact_id: string }>`select fact_id from keyword_facts where ${filters}
        order by quality_score desc, message_ts desc, fact_id limit ${q.limit}`.execute(this.db);
      return {
        hits: rows.rows.map((r) => ({ factId: r.fact_id, score: 1, highlights: [] })),
        total: await this.countWhere(filters),
        ...(q.facets?.length ? { facets: await this.facets(filters, q.facets) } : {}),
      };
    }
    const terms = await this.queryTerms(q.query);
    const { tsq, all } = await this.tsquery(q, terms);
    const words = q.fuzzy ? fuzzyWords(q.query) : [];
    const fuzzy = words.length > 0 ? this.fuzzySql(words, q.fuzziness) : sql`false`;
    const match = sql`(tsv @@ ${tsq} or ${fuzzy}) and ${filters}`;
    const idfs = terms.map((t) => t.idf);
    const avgdl = terms[0]?.avgdl ?? 1;
    // BM25 (k1 1.2, b 0.75) with BM25F-style field weights (a term in the fact counts 1, in its context
    // CONTEXT_WEIGHT, as the tf column stores them): one jsonb lookup per query term, no subquery per row.
    const f8 = (x: number) => sql`${x}::float8`;
    const norm = sql`(${f8(K1)} * (1 - ${f8(B)} + ${f8(B)} * k.doc_len / ${f8(avgdl)}))`;
    const bm25 =
      terms.length === 0
        ? sql`0::float8`
        : sql.join(
            terms.map((t) => {
              const tf = sql`coalesce((k.tf ->> ${t.lexeme})::float8, 0)`;
              return sql`${f8(t.idf)} * ${tf} * ${f8(K1 + 1)} / (${tf} + ${norm})`;
            }),
            sql` + `,
          );
    const bestIdf = Math.max(0, ...idfs, words.length > 0 ? 1 : 0);
    const similarity = words.length > 0 ? sql`${f8(bestIdf)} * ${this.similaritySql(words)}` : sql`0`;
    // Highlights for the returned rows only: from the fact's text, else from its context (a context-only match).
    // total comes from a window over every match, in the same scan that ranks them.
    const rows = await sql<{
      fact_id: string;
      text: string;
      rank: number;
      exact: boolean;
      headline: string;
      total: number;
    }>`
      select fact_id, text, exact, rank, total,
        case when not exact then '' when own.h like '%<mark>%' then own.h
             else ts_headline('english', context, ${all ?? tsq}, ${HEADLINE_OPTS}) end as headline
      from (select fact_id, text, context, tsv @@ ${tsq} as exact, ${bm25} + ${similarity} as rank,
              count(*) over () as total
            from keyword_facts k where ${match} order by rank desc, fact_id limit ${q.limit}) m
      cross join lateral (select case when exact then ts_headline('english', text, ${all ?? tsq}, ${HEADLINE_OPTS}) end as h) own
      order by rank desc, fact_id`.execute(this.db);
    const best = Math.max(...rows.rows.map((r) => Number(r.rank)), Number.EPSILON);
    const hits: KeywordHit[] = rows.rows.map((r) => ({
      factId: r.fact_id,
      score: Math.min(1, Number(r.rank) / best),
      highlights: r.exact ? splitHeadline(r.headline) : markSimilar(r.text, words),
    }));
    // Candidates came from the rarest terms only: total (and facets) count the facts matching any selecting term.
    const allMatch = all && sql`(tsv @@ ${all} or ${fuzzy}) and ${filters}`;
    return {
      hits,
      total:
        q.total === false ? hits.length : allMatch ? await this.countWhere(allMatch) : Number(rows.rows[0]?.total ?? 0),
      ...(q.facets?.length ? { facets: await this.facets(allMatch ?? match, q.facets) } : {}),
    };
  }

  /**
   * Facts that search's total counts (the query's match without the candidate budget), or in `include` and passing
   * the filters: their number and facets, in one count each.
   */
  async count(q: KeywordCountQuery): Promise<{ total: number; facets?: Record<string, Record<string, number>> }> {
    const filters = this.filterSql({ ...q, limit: 0 });
    const ids = [...new Set(q.include ?? [])].filter((id) => UUID.test(id));
    let where = filters;
    if (q.queryMatches === false)
      where = ids.length > 0 ? sql`fact_id = any(${ids}::uuid[]) and ${filters}` : sql`false`;
    else if (!MATCH_ALL.test(q.query)) {
      const terms = await this.queryTerms(q.query);
      const { tsq, all } = await this.tsquery({ ...q, limit: 0 }, terms);
      const words = q.fuzzy ? fuzzyWords(q.query) : [];
      const fuzzy = words.length > 0 ? this.fuzzySql(words, q.fuzziness) : sql`false`;
      where = sql`(tsv @@ ${all ?? tsq} or ${fuzzy}) and ${filters}`;
      if (ids.length > 0) where = sql`((${where}) or (fact_id = any(${ids}::uuid[]) and ${filters}))`;
    }
    return {
      total: await this.countWhere(where),
      ...(q.facets?.length ? { facets: await this.facets(where, q.facets) } : {}),
    };
  }

  /**
   * The query's English lexemes (stemmed, stop words out; `-word` exclusions left out) with their BM25
   * idf = ln(1 + (N − df + 0.5) / (df + 0.5)) over the whole index, and the index's mean document length.
   * Lexemes no document holds are dropped.
   */
  private async queryTerms(query: string): Promise<QueryTerm[]> {
    const positive = query.replace(/(^|\s)-[\p{L}\p{N}_]+/gu, ' ');
    const r = await sql<{ lexeme: string; df: number; docs: number; tokens: number }>`
      select t.lexeme, t.df, s.docs, s.tokens
      from (select distinct lexeme from unnest(to_tsvector('english', ${positive}))) q
      join keyword_terms t on t.lexeme = q.lexeme and t.df > 0
      cross join keyword_stats s`.execute(this.db);
    return r.rows.map((x) => {
      const docs = Number(x.docs);
      const df = Number(x.df);
      return {
        lexeme: x.lexeme,
        df,
        docs,
        idf: Math.log(1 + (docs - df + 0.5) / (df + 0.5)),
        avgdl: docs > 0 ? Math.max(1, Number(x.tokens) / docs) : 1,
      };
    });
  }

  /**
   * Which facts match: with proximity, the query's terms within N words of each other (tsquery distance
   * operators, either order); with web-search syntax (quotes, ` -word`, OR), websearch_to_tsquery; else
   * any of the query's terms, leaving out those in more than COMMON_SHARE of all facts when a rarer one is
   * there (they still count in the ranking; like Elasticsearch's common-terms cutoff), and of those only the rarest
   * within SELECT_BUDGET. `tsq` selects the candidates; `all` (null when it is the same) is the match without the
   * budget, which total and facets count.
   */
  private async tsquery(
    q: KeywordQuery,
    terms: readonly QueryTerm[],
  ): Promise<{ tsq: RawBuilder<unknown>; all: RawBuilder<unknown> | null }> {
    if (q.proximity && q.proximity > 0) {
      const lex = await sql<{
        lexeme: string;
      }>`select lexeme from unnest(to_tsvector('english', ${q.query})) order by positions[1]`.execute(this.db);
      const quoted = lex.rows.map((r) => `'${r.lexeme.replaceAll("'", "''")}'`);
      if (quoted.length >= 2) {
        const n = Math.min(q.proximity, 20);
        const pairs = quoted.slice(1).map((b, i) => {
          const a = quoted[i]!;
          const alts = Array.from({ length: n }, (_, d) => [`${a} <${d + 1}> ${b}`, `${b} <${d + 1}> ${a}`]).flat();
          return `(${alts.join(' | ')})`;
        });
        return { tsq: sql`${pairs.join(' & ')}::tsquery`, all: null };
      }
    }
    if (WEBSEARCH_SYNTAX.test(q.query)) return { tsq: sql`websearch_to_tsquery('english', ${q.query})`, all: null };
    const anyOf = (ts: readonly QueryTerm[]) =>
      sql`${ts.map((t) => `'${t.lexeme.replaceAll("'", "''")}'`).join(' | ')}::tsquery`;
    const rare = terms.filter((t) => t.df <= COMMON_SHARE * t.docs);
    const all =
      rare.length > 0 && rare.length < terms.length
        ? anyOf(rare)
        : sql`replace(plainto_tsquery('english', ${q.query})::text, ' & ', ' | ')::tsquery`;
    const pool = [...(rare.length > 0 ? rare : terms)].sort((a, b) => a.df - b.df);
    let budget = this.selectBudget;
    const selecting = pool.filter((t, i) => {
      budget -= t.df;
      return i === 0 || budget >= 0;
    });
    return selecting.length < pool.length ? { tsq: anyOf(selecting), all } : { tsq: all, all: null };
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

  private async countWhere(where: RawBuilder<unknown>): Promise<number> {
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
