/*
 * Elasticsearch 8 vs OpenSearch 2.x for this adapter. Verified here against OpenSearch 2.19.1
 * (`scripts/services up opensearch`) with @elastic/elasticsearch 8.19.2:
 * - The stock v8 client rejects any server that does not send `x-elastic-product: Elasticsearch`
 *   (ProductNotSupportedError on the first request); OpenSearch never sends it. The stock client also sends
 *   `Content-Type: application/vnd.elasticsearch+json; compatible-with=8` (ndjson alike), which OpenSearch answers
 *   with 406 (a GET with only that Accept header passes). OpenSearchCompatTransport turns the product check off and
 *   sends plain `application/json` / `application/x-ndjson`, and is used for both servers.
 * - These work on OpenSearch as written: a strict explicit mapping with custom analyzers (standard tokenizer,
 *   possessive_english and porter2 stemmers, a stop list) and a lowercase normalizer, `match`/`multi_match` with
 *   fuzziness, `intervals` (max_gaps, ordered), `simple_query_string` flags, `bool.filter`, `track_total_hits`,
 *   unified highlighting with pre/post tags on `index_options: offsets`, `terms` aggregations ordered by `_count`
 *   then `_key`, `delete_by_query` with `conflicts: proceed`, `bulk`, refresh, `auto_expand_replicas`, and
 *   `hits.total` as `{value, relation}`.
 * Not verified, because no ES 8 server runs here (documented, not run): that ES 8 takes plain `application/json`
 * without the product header check (it does for clients without compatibility mode); scores on ES 8 (Lucene 9.x
 * there, 9.12 in OpenSearch 2.19: both BM25, normalized scores may differ a little); where ES 8 cuts highlight
 * fragments. The client's types describe ES 8: a field OpenSearch does not know fails at run time (400).
 */
import { AtlasError } from '@atlas/core';
import { Client, errors, type estypes, SniffingTransport } from '@elastic/elasticsearch';
import type { KeywordCountQuery, KeywordDoc, KeywordHit, KeywordIndex, KeywordQuery, KeywordResult } from './port.js';

type Query = estypes.QueryDslQueryContainer;
const CHUNK = 500;
const MATCH_ALL = /^\s*\*?\s*$/;
const WEBSEARCH_SYNTAX = /"|\s-\w|\bOR\b/;
const NEGATED = /(?:^|\s)-([^\s"]+)/g;
const FACET_FIELD = { fact_type: 'fact_type', importance: 'importance', topics: 'topic_tags' } as const;
const FRAGMENTS = { number_of_fragments: 2, fragment_size: 180, no_match_size: 0 };
/** Postgres' `english` stop words (snowball), so that both adapters ignore the same words of a question. */
const STOP_WORDS =
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
herself it its itself they them their theirs themselves what which who whom this that these those am is
are was were be been being have has had having do does did doing a an the and but if or because as until
while of at by for with about against between into through during before after above below to from up
down in out on off over under again further then once here there when where why how all any both each
few more most other some such no nor not only own same so than too very s t can will just don should now`.split(/\s+/);

/** The v8 client's transport with no Elasticsearch product check and plain JSON content types (OpenSearch). */
export class OpenSearchCompatTransport extends SniffingTransport {
  constructor(opts: ConstructorParameters<typeof SniffingTransport>[0]) {
    super({ ...opts, productCheck: undefined, vendoredHeaders: undefined });
  }
}

export interface ElasticsearchKeywordIndexOptions {
  /** Server URL (`ELASTICSEARCH_URL`), e.g. `http://127.0.0.1:9200`. */
  url: string;
  /** Index name. Default `atlas-facts`. */
  index?: string | undefined;
  /** Number of replicas. Default `auto_expand_replicas: 0-1`, so a single node has none and stays green. */
  replicas?: number | undefined;
  /** Timeout per request, in milliseconds. Default 30000. */
  requestTimeoutMs?: number | undefined;
}

/**
 * Keyword index on Elasticsearch 8 or OpenSearch 2.x. Everything lives in one index (default `atlas-facts`) with
 * a single primary shard, so BM25 statistics, and so the score normalization, cover the whole index. Fields:
 * `text` with English analysis (plus `text.plain`, not stemmed, for typo matching), keyword fields for filters and
 * facets, `quality_score` as a float and `message_ts` as a date. The first call creates the index with an explicit,
 * strict mapping; an index that already exists is used as it is. Errors are AtlasError:
 * - STORE_UNAVAILABLE (retriable) when the server is unreachable, times out, or answers 429/502/503/504, and when
 *   the index has disappeared (the next call creates it again);
 * - INTERNAL_ERROR for any other refusal.
 */
export class ElasticsearchKeywordIndex implements KeywordIndex {
  readonly index: string;
  private readonly es: Client;
  private ready: Promise<void> | undefined;

  constructor(private readonly opts: ElasticsearchKeywordIndexOptions) {
    this.index = opts.index ?? 'atlas-facts';
    // maxRetries 1: an unreachable server fails within 1-2 s (one retry after the client's backoff). Callers retry.
    const requestTimeout = opts.requestTimeoutMs ?? 30_000;
    this.es = new Client({ node: opts.url, Transport: OpenSearchCompatTransport, requestTimeout, maxRetries: 1 });
  }

  /** Deletes the index with everything in it, then creates it again, empty, so a replay can rebuild it. */
  async truncate(): Promise<void> {
    await this.drop();
    await this.ensureIndex();
  }

  /**
   * Per message (its last set wins): delete-by-query of its facts not in `docs`, then a bulk index of `docs` (upsert
   * on factId). Refresh: one explicit refresh at the end of every call, so the next search sees the writes, as on
   * Postgres. It costs a small segment per call, fine at projector batch sizes; `refresh=wait_for` would hold each
   * call up to the refresh interval (1 s), and no refresh would leave a removed fact findable for up to a second.
   */
  async replaceForMessages(sets: readonly { messageId: string; docs: readonly KeywordDoc[] }[]): Promise<void> {
    if (sets.length === 0) return;
    await this.ensureIndex();
    const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
    await this.call('replace facts', async () => {
      for (let i = 0; i < last.length; i += CHUNK) {
        const chunk = last.slice(i, i + CHUNK);
        const keep = chunk.flatMap((s) => s.docs.map((d) => d.factId));
        const byMessage: Query = { terms: { message_id: chunk.map((s) => s.messageId) } };
        const del = await this.es.deleteByQuery({
          index: this.index,
          conflicts: 'proceed',
          refresh: false,
          query: { bool: { filter: [byMessage], must_not: keep.length > 0 ? [{ ids: { values: keep } }] : [] } },
        });
        if (del.failures?.length) throw writeFailure('delete_by_query', del.failures[0]?.status, del.failures[0]);
        const docs = chunk.flatMap((s) => s.docs);
        if (docs.length === 0) continue;
        const res = await this.es.bulk({
          refresh: false,
          operations: docs.flatMap((d) => [{ index: { _index: this.index, _id: d.factId } }, toSource(d)]),
        });
        const bad = res.errors ? res.items.map((it) => it.index).find((op) => op?.error) : undefined;
        if (bad) throw writeFailure('bulk', bad.status, bad.error);
      }
      await this.es.indices.refresh({ index: this.index });
    });
  }

  /** A delete-by-query on channel_id, then a refresh so the next search no longer sees the channel. */
  async deleteChannel(channelId: string): Promise<number> {
    await this.ensureIndex();
    return this.call('delete channel', async () => {
      const del = await this.es.deleteByQuery({
        index: this.index,
        conflicts: 'proceed',
        refresh: true,
        query: { term: { channel_id: channelId } },
      });
      if (del.failures?.length) throw writeFailure('delete_by_query', del.failures[0]?.status, del.failures[0]);
      return del.deleted ?? 0;
    });
  }

  /**
   * - `*` or empty: every fact passing the filters, best quality first, score 1, no highlights.
   * - Otherwise the query's words OR-ed (`match`). Quotes, ` -word` or `OR` switch to `simple_query_string`
   *   (AND by default, `"phrase"`, `-not`, `OR`).
   * - `proximity: N`: the terms within N words of each other in either order (positions differ by at most N, stop
   *   words count), as the Postgres adapter's `<N>`: an `intervals` filter (`max_gaps: N-1`, `ordered: false`) ranked
   *   by the OR `match`. A `match_phrase` slop cannot say "either order" (slop N: N+1 apart in order, N-1 reversed).
   *   Three or more terms must all fit in one window (Postgres checks each neighbouring pair).
   * - `fuzzy`: a `multi_match` with `fuzziness` (AUTO, 1 or 2 edits) over `text` and the unstemmed `text.plain`
   *   (typos are made in words, not stems); words after ` -` stay excluded.
   * Score: BM25 divided by the query's best score, in (0, 1]. `total` is exact (the number of hits with `total: false`); facets are `terms` aggregations
   * over every match (top 50 values).
   */
  async search(q: KeywordQuery): Promise<KeywordResult> {
    await this.ensureIndex();
    const filter = filters(q);
    const matchAll = MATCH_ALL.test(q.query);
    const aggs = Object.fromEntries(
      (q.facets ?? []).map((f) => [
        f,
        { terms: { field: FACET_FIELD[f], size: 50, order: [{ _count: 'desc' as const }, { _key: 'asc' as const }] } },
      ]),
    );
    const highlight = {
      pre_tags: ['<mark>'],
      post_tags: ['</mark>'],
      fields: q.fuzzy
        ? { text: FRAGMENTS, 'text.plain': FRAGMENTS, context: FRAGMENTS }
        : { text: FRAGMENTS, context: FRAGMENTS },
    };
    const res = await this.call('search', () =>
      this.es.search({
        index: this.index,
        size: q.limit,
        track_total_hits: q.total !== false,
        _source: false,
        query: { bool: matchAll ? { filter } : { ...textQuery(q), filter } },
        sort: matchAll
          ? [{ quality_score: 'desc' }, { message_ts: 'desc' }, { fact_id: 'asc' }]
          : [{ _score: { order: 'desc' } }, { fact_id: 'asc' }],
        ...(matchAll ? {} : { highlight }),
        ...(q.facets?.length ? { aggs } : {}),
      }),
    );
    const best = Math.max(...res.hits.hits.map((h) => h._score ?? 0), Number.EPSILON);
    const hits: KeywordHit[] = res.hits.hits.map((h) => ({
      factId: h._id!,
      score: matchAll ? 1 : Math.min(1, (h._score ?? 0) / best),
      highlights: h.highlight?.text ?? h.highlight?.['text.plain'] ?? h.highlight?.context ?? [],
    }));
    const total =
      q.total === false
        ? hits.length
        : typeof res.hits.total === 'number'
          ? res.hits.total
          : (res.hits.total?.value ?? 0);
    if (!q.facets?.length) return { hits, total };
    const facets: Record<string, Record<string, number>> = {};
    for (const f of q.facets) {
      const buckets = (res.aggregations?.[f] as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
      facets[f] = Object.fromEntries((Array.isArray(buckets) ? buckets : []).map((b) => [String(b.key), b.doc_count]));
    }
    return { hits, total, facets };
  }

  /**
   * The query's matches (as search's total counts them) or facts of `include` passing the filters: an exact count
   * (track_total_hits) and the facets over them, no hits.
   */
  async count(q: KeywordCountQuery): Promise<{ total: number; facets?: Record<string, Record<string, number>> }> {
    await this.ensureIndex();
    const full: KeywordQuery = { ...q, limit: 0 };
    const filter = filters(full);
    const include = [...new Set(q.include ?? [])];
    const query: Query =
      q.queryMatches === false
        ? { bool: { filter: [...filter, { terms: { fact_id: include } }] } }
        : MATCH_ALL.test(q.query)
          ? { bool: { filter } }
          : include.length === 0
            ? { bool: { ...textQuery(full), filter } }
            : {
                bool: {
                  filter,
                  should: [{ bool: textQuery(full) }, { terms: { fact_id: include } }],
                  minimum_should_match: 1,
                },
              };
    const aggs = Object.fromEntries(
      (q.facets ?? []).map((f) => [
        f,
        { terms: { field: FACET_FIELD[f], size: 50, order: [{ _count: 'desc' as const }, { _key: 'asc' as const }] } },
      ]),
    );
    const res = await this.call('count', () =>
      this.es.search({
        index: this.index,
        size: 0,
        track_total_hits: true,
        _source: false,
        query,
        ...(q.facets?.length ? { aggs } : {}),
      }),
    );
    const total = typeof res.hits.total === 'number' ? res.hits.total : (res.hits.total?.value ?? 0);
    if (!q.facets?.length) return { total };
    const facets: Record<string, Record<string, number>> = {};
    for (const f of q.facets) {
      const buckets = (res.aggregations?.[f] as estypes.AggregationsStringTermsAggregate | undefined)?.buckets;
      facets[f] = Object.fromEntries((Array.isArray(buckets) ? buckets : []).map((b) => [String(b.key), b.doc_count]));
    }
    return { total, facets };
  }

  /** Creates the index with its mapping unless it already exists. Idempotent, and safe when processes race. */
  ensureIndex(): Promise<void> {
    this.ready ??= this.call('create index', async () => {
      try {
        await this.es.indices.create({ index: this.index, settings: this.settings(), mappings: MAPPINGS });
      } catch (e) {
        if (!(e instanceof errors.ResponseError && errorType(e) === 'resource_already_exists_exception')) throw e;
        // An index made before facts had a context: add the field (adding a field is a compatible mapping change).
        await this.es.indices.putMapping({ index: this.index, properties: { context: CONTEXT_MAPPING } });
      }
    }).catch((e: unknown) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  /** Deletes the index. No error if it does not exist. */
  async drop(): Promise<void> {
    this.ready = undefined;
    await this.call('delete index', () => this.es.indices.delete({ index: this.index, ignore_unavailable: true }));
  }

  /** Closes the client's connections. */
  async close(): Promise<void> {
    await this.es.close();
  }

  private settings(): estypes.IndicesIndexSettings {
    const replicas = this.opts.replicas;
    const copies = replicas === undefined ? { auto_expand_replicas: '0-1' } : { number_of_replicas: replicas };
    return { number_of_shards: 1, ...copies, analysis: ANALYSIS };
  }

  /** Runs a request and turns failures into AtlasError: STORE_UNAVAILABLE when a later retry can succeed. */
  private async call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof AtlasError) throw e;
      const status = e instanceof errors.ResponseError ? e.statusCode : undefined;
      // Another process truncated the index: the next call creates it again, so a retry succeeds.
      const missing = e instanceof errors.ResponseError && errorType(e) === 'index_not_found_exception';
      if (missing) this.ready = undefined;
      const unavailable =
        missing ||
        e instanceof errors.ConnectionError ||
        e instanceof errors.TimeoutError ||
        e instanceof errors.NoLivingConnectionsError ||
        [429, 502, 503, 504].includes(status ?? 0);
      const msg = `${what} on ${this.opts.url}: ${e instanceof Error ? e.message : String(e)}`;
      throw unavailable
        ? new AtlasError('STORE_UNAVAILABLE', `keyword index unavailable: ${msg}`, { retriable: true, cause: e })
        : new AtlasError('INTERNAL_ERROR', `keyword index refused ${msg}`, { cause: e, details: { status } });
    }
  }
}

/** English as Postgres does it: its stop words, then the snowball (porter2) stemmer. `plain` skips the stemmer. */
const ANALYSIS: estypes.IndicesIndexSettingsAnalysis = {
  normalizer: { lowercase: { type: 'custom', filter: ['lowercase'] } },
  filter: {
    possessive: { type: 'stemmer', language: 'possessive_english' },
    stop_pg: { type: 'stop', stopwords: STOP_WORDS },
    porter2: { type: 'stemmer', language: 'porter2' },
  },
  analyzer: {
    atlas_english: { type: 'custom', tokenizer: 'standard', filter: ['possessive', 'lowercase', 'stop_pg', 'porter2'] },
    atlas_plain: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'stop_pg'] },
  },
};

/** A fact's context (author, source message, previous turn): matched and scored at half the weight of its text. */
const CONTEXT_MAPPING: estypes.MappingProperty = { type: 'text', analyzer: 'atlas_english', index_options: 'offsets' };

const MAPPINGS: estypes.MappingTypeMapping = {
  dynamic: 'strict',
  properties: {
    fact_id: { type: 'keyword' },
    message_id: { type: 'keyword' },
    channel_id: { type: 'keyword' },
    // offsets: highlighting reads the postings instead of analyzing the text again
    text: {
      type: 'text',
      analyzer: 'atlas_english',
      index_options: 'offsets',
      fields: { plain: { type: 'text', analyzer: 'atlas_plain', index_options: 'offsets' } },
    },
    context: CONTEXT_MAPPING,
    fact_type: { type: 'keyword' },
    importance: { type: 'keyword' },
    topic_tags: { type: 'keyword' },
    entity_tags: { type: 'keyword', normalizer: 'lowercase' },
    author_name: { type: 'keyword', normalizer: 'lowercase' },
    message_ts: { type: 'date' },
    quality_score: { type: 'float' },
  },
};

const toSource = (d: KeywordDoc) => ({
  fact_id: d.factId,
  message_id: d.messageId,
  channel_id: d.channelId,
  text: d.text,
  context: d.context,
  fact_type: d.factType,
  importance: d.importance,
  topic_tags: d.topicTags,
  entity_tags: d.entityTags,
  author_name: d.authorName,
  message_ts: d.messageTs,
  quality_score: d.qualityScore,
});

/** The scoring part of the query (`must`/`should`/`must_not` of the outer bool; the filters are added by search). */
const textQuery = (q: KeywordQuery): estypes.QueryDslBoolQuery => {
  // BM25 on the fact's text plus half of BM25 on its context (summed: `most_fields`). The Postgres adapter folds both
  // fields into one BM25 with weighted term frequencies (BM25F-like): the same preferences, not identical scores.
  const anyWord: Query = {
    multi_match: { query: q.query, fields: ['text', 'context^0.5'], type: 'most_fields', operator: 'or' },
  };
  let primary: Query = anyWord;
  let negated: string[] = [];
  if (q.proximity && q.proximity > 0) {
    const near = { match: { query: q.query, max_gaps: Math.min(q.proximity, 20) - 1, ordered: false } };
    primary = { bool: { filter: [{ intervals: { text: near } }], must: [anyWord] } };
  } else if (WEBSEARCH_SYNTAX.test(q.query)) {
    const query = q.query
      .split('"')
      .map((part, i) => (i % 2 === 0 ? part.replace(/\bOR\b/g, '|') : part)) // OR outside quotes
      .join('"');
    primary = {
      simple_query_string: {
        query,
        fields: ['text', 'context^0.5'],
        default_operator: 'and',
        flags: 'OR|NOT|PHRASE|WHITESPACE',
      },
    };
    negated = [...q.query.matchAll(NEGATED)].map((m) => m[1]!);
  }
  if (!q.fuzzy) return { must: [primary] };
  const positive = negated.length > 0 ? q.query.replace(NEGATED, ' ') : q.query;
  const fuzziness: estypes.Fuzziness = q.fuzziness === '1' || q.fuzziness === '2' ? Number(q.fuzziness) : 'AUTO';
  const fuzzy: Query = { multi_match: { query: positive, fields: ['text', 'text.plain'], operator: 'or', fuzziness } };
  return {
    should: primary === anyWord ? [fuzzy] : [primary, fuzzy],
    minimum_should_match: 1,
    ...(negated.length > 0 ? { must_not: [{ match: { text: { query: negated.join(' '), operator: 'or' } } }] } : {}),
  };
};

const filters = (q: KeywordQuery): Query[] => {
  const f = q.filters ?? {};
  const lower = (xs: string[]) => xs.map((x) => x.toLowerCase());
  const out: Query[] = [];
  if (q.channelId !== null) out.push({ term: { channel_id: q.channelId } });
  if (f.channels) out.push({ terms: { channel_id: [...f.channels] } }); // empty terms: matches nothing
  if (f.factTypes?.length) out.push({ terms: { fact_type: f.factTypes } });
  if (f.importance?.length) out.push({ terms: { importance: f.importance } });
  if (f.topics?.length) out.push({ terms: { topic_tags: lower(f.topics) } }); // stored as given, like Postgres
  if (f.entities?.length) out.push({ terms: { entity_tags: lower(f.entities) } });
  if (f.authors?.length) out.push({ terms: { author_name: lower(f.authors) } });
  const { start, end } = f.dateRange ?? {};
  if (start || end)
    out.push({ range: { message_ts: { ...(start ? { gte: start } : {}), ...(end ? { lte: end } : {}) } } });
  return out;
};

const errorType = (e: InstanceType<typeof errors.ResponseError>): string | undefined =>
  (e.body as { error?: { type?: string } } | undefined)?.error?.type;

/** A refused write inside a 200 answer: STORE_UNAVAILABLE (retriable) when the server is busy, else INTERNAL_ERROR. */
const writeFailure = (what: string, status: number | undefined, detail: unknown): AtlasError => {
  const busy = status === 429 || status === 503;
  const msg = `keyword index ${busy ? 'busy' : 'refused a write'} (${what}, status ${status})`;
  return new AtlasError(busy ? 'STORE_UNAVAILABLE' : 'INTERNAL_ERROR', msg, { retriable: busy, details: { detail } });
};
