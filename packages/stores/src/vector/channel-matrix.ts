import type { KeywordFilters } from '../keyword/port.js';

/** One stored vector as a channel matrix loads it (the filter fields of FactFilterFields, lower-cased where matched so). */
export interface MatrixRow {
  factId: string;
  model: string;
  /** Unit vector, any length-`dim` numeric array. */
  vector: ArrayLike<number>;
  factType: string;
  importance: string;
  topicTags: string[];
  entityTags: string[];
  authorName: string;
  /** ms since epoch. */
  messageTs: number;
}

/**
 * Every vector of one channel as one Float32Array (row-major, unit rows), searched exactly: a dot product per
 * row that passes the filters, then the top `limit`. At a few thousand rows this is a few milliseconds in V8,
 * where pgvector's HNSW under a channel filter in PGlite (WASM) takes tens (docs/benchmarks.md "Search latency").
 * Filters follow factFilterSql: topics lower-cased, entities and authors case-insensitive, date range inclusive.
 */
export class ChannelMatrix {
  readonly size: number;
  private readonly data: Float32Array;
  private readonly rows: readonly MatrixRow[];

  constructor(
    readonly dim: number,
    rows: readonly MatrixRow[],
  ) {
    this.rows = rows.map((r) => ({
      ...r,
      vector: [],
      topicTags: r.topicTags.map((t) => t.toLowerCase()),
      entityTags: r.entityTags.map((t) => t.toLowerCase()),
      authorName: r.authorName.toLowerCase(),
    }));
    this.size = rows.length;
    this.data = new Float32Array(rows.length * dim);
    rows.forEach((r, i) => {
      let norm = 0;
      for (let j = 0; j < dim; j++) norm += (r.vector[j] ?? 0) ** 2;
      const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let j = 0; j < dim; j++) this.data[i * dim + j] = (r.vector[j] ?? 0) * inv;
    });
  }

  /** Facts nearest `vector` (cosine, clamped to [0, 1]), best first, ties by fact id. */
  search(
    vector: readonly number[],
    model: string,
    limit: number,
    f: KeywordFilters = {},
  ): { factId: string; score: number }[] {
    const dim = this.dim;
    const q = new Float32Array(dim);
    let norm = 0;
    for (let j = 0; j < dim; j++) norm += (vector[j] ?? 0) ** 2;
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let j = 0; j < dim; j++) q[j] = (vector[j] ?? 0) * inv;
    const pass = rowFilter(f);
    const data = this.data;
    const rows = this.rows;
    const scores = new Float64Array(rows.length);
    const picked: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (row.model !== model || !pass(row)) continue;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      const off = i * dim;
      let j = 0;
      for (; j + 3 < dim; j += 4) {
        s0 += data[off + j]! * q[j]!;
        s1 += data[off + j + 1]! * q[j + 1]!;
        s2 += data[off + j + 2]! * q[j + 2]!;
        s3 += data[off + j + 3]! * q[j + 3]!;
      }
      for (; j < dim; j++) s0 += data[off + j]! * q[j]!;
      scores[i] = s0 + s1 + s2 + s3;
      picked.push(i);
    }
    picked.sort((a, b) => scores[b]! - scores[a]! || (rows[a]!.factId < rows[b]!.factId ? -1 : 1));
    return picked
      .slice(0, limit)
      .map((i) => ({ factId: rows[i]!.factId, score: Math.min(1, Math.max(0, scores[i]!)) }));
  }
}

const rowFilter = (f: KeywordFilters): ((r: MatrixRow) => boolean) => {
  const types = f.factTypes?.length ? new Set(f.factTypes) : null;
  const importance = f.importance?.length ? new Set(f.importance) : null;
  const topics = f.topics?.length ? new Set(f.topics.map((t) => t.toLowerCase())) : null;
  const entities = f.entities?.length ? new Set(f.entities.map((e) => e.toLowerCase())) : null;
  const authors = f.authors?.length ? new Set(f.authors.map((a) => a.toLowerCase())) : null;
  const start = f.dateRange?.start ? Date.parse(f.dateRange.start) : null;
  const end = f.dateRange?.end ? Date.parse(f.dateRange.end) : null;
  return (r) =>
    (!types || types.has(r.factType)) &&
    (!importance || importance.has(r.importance)) &&
    (!topics || r.topicTags.some((t) => topics.has(t))) &&
    (!entities || r.entityTags.some((e) => entities.has(e))) &&
    (!authors || authors.has(r.authorName)) &&
    (start === null || r.messageTs >= start) &&
    (end === null || r.messageTs <= end);
};
