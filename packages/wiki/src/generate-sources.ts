// The read and diff steps of wiki generation: what a version was generated from, read, indexed and compared.
import { createHash } from 'node:crypto';
import { type AuthorSums, addToSum } from './author-centring.js';
import type { ClusterStats } from './clusters.js';
import type {
  ChannelAuthorSums,
  MemoryRecord,
  SourceRow,
  WikiDocumentSource,
  WikiGenerateDeps,
  WikiGenerateResult,
  WikiGraphSource,
  WikiSink,
} from './generate-types.js';
import type { WikiPagePlace } from './render.js';
import type { SourceMessage, WikiDecision, WikiFact, WikiPage, WikiPerson } from './types.js';

const PAGE_SIZE = 1000;
const GRAPH_LIMIT = 10_000;

/**
 * The raw vectors a run needs and its authors' sums. Full: every fact's vector (the sums are taken from them and
 * cached). Incremental: the vectors of the `fresh` facts, plus those of the facts of their authors that the cached
 * sums (deps.authorSums) do not hold yet; an author whose cached facts changed or went is summed again from all of
 * their facts. Without a cache: the fresh facts' authors' vectors, all of them (sums undefined: authorCentred sums).
 */
export async function authorVectors(
  deps: WikiGenerateDeps,
  channelId: string,
  mode: 'full' | 'incremental',
  facts: readonly WikiFact[],
  freshIds: readonly string[],
  factDigests: ReadonlyMap<string, string>,
): Promise<{ vectors: Map<string, number[]>; sums: AuthorSums | undefined }> {
  const cache = deps.authorSums;
  const byAuthor = new Map<string, string[]>();
  for (const f of facts) {
    const ids = byAuthor.get(f.author_name);
    if (ids) ids.push(f.id);
    else byAuthor.set(f.author_name, [f.id]);
  }
  const authorOf = new Map(facts.map((f) => [f.id, f.author_name]));
  const freshAuthors = new Set(freshIds.map((id) => authorOf.get(id)!));
  const cached = mode === 'incremental' ? cache?.get(channelId) : undefined;
  if (!cached) {
    const ids = mode === 'full' ? facts.map((f) => f.id) : [...freshAuthors].flatMap((a) => byAuthor.get(a) ?? []);
    const vectors = await deps.vectors.vectorsOf(ids);
    if (!cache) return { vectors, sums: undefined };
    const entry: ChannelAuthorSums = { sums: new Map(), members: new Map() };
    for (const [id, v] of vectors) {
      const a = authorOf.get(id)!;
      addToSum(entry.sums, a, v);
      const m = entry.members.get(a) ?? new Map<string, string>();
      m.set(id, factDigests.get(id) ?? '');
      entry.members.set(a, m);
    }
    cache.set(channelId, entry);
    return { vectors, sums: entry.sums };
  }
  const need = new Set(freshIds);
  const add: string[] = [];
  for (const a of freshAuthors) {
    const ids = byAuthor.get(a) ?? [];
    const held = cached.members.get(a);
    const valid = held !== undefined && [...held].every(([id, d]) => factDigests.get(id) === d);
    if (!valid) {
      cached.sums.delete(a);
      cached.members.delete(a);
    }
    for (const id of ids)
      if (!valid || !held.has(id)) {
        need.add(id);
        add.push(id);
      }
  }
  const vectors = await deps.vectors.vectorsOf([...need]);
  for (const id of add) {
    const v = vectors.get(id);
    if (!v) continue;
    const a = authorOf.get(id)!;
    addToSum(cached.sums, a, v);
    const m = cached.members.get(a) ?? new Map<string, string>();
    m.set(id, factDigests.get(id) ?? '');
    cached.members.set(a, m);
  }
  return { vectors, sums: cached.sums };
}

/** The digest of every source digest (facts, messages, graph lists): equal fingerprints, nothing to regenerate. */
export function sourceFingerprint(
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  graphRows: readonly SourceRow[],
): string {
  const h = createHash('sha1');
  for (const [kind, m] of [
    ['f', digests.facts],
    ['m', digests.messages],
  ] as const)
    for (const [id, d] of [...m].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)))
      h.update(`${kind}:${id}:${d}\n`);
  for (const r of graphRows) h.update(`g:${r.id}:${r.digest}\n`);
  return h.digest('hex');
}

/** Stored sources by kind and id. */
interface SourceIndex {
  /** `excerpt`: the fact's bestExcerpt in its message when the run that stored it built one (undefined: never). */
  facts: Map<string, { digest: string; fact: WikiFact; excerpt: string | null | undefined }>;
  messages: Map<string, { digest: string; message: SourceMessage; permalink: string }>;
  graph: Map<string, string>;
}

/**
 * A stored fact row's body split into the fact and its excerpt, memoised per body object: the generator's cached
 * sources hand the same bodies to run after run, and the same fact object lets the render reuse its memoised tokens
 * and citation (render.ts CITED). A run registers the bodies it saves with the fact objects it rendered, so the
 * run after it (a full run's first incremental included) renders those same objects.
 */
export const FACT_BODIES = new WeakMap<object, { fact: WikiFact; excerpt: string | null | undefined }>();

export function indexSources(rows: readonly SourceRow[]): SourceIndex {
  const out: SourceIndex = { facts: new Map(), messages: new Map(), graph: new Map() };
  for (const r of rows) {
    if (r.kind === 'fact') {
      const body = r.body as WikiFact & { excerpt?: string | null };
      let split = FACT_BODIES.get(body);
      if (!split) {
        const { excerpt, ...fact } = body;
        split = { fact, excerpt };
        FACT_BODIES.set(body, split);
      }
      out.facts.set(r.id, { digest: r.digest, fact: split.fact, excerpt: split.excerpt });
    } else if (r.kind === 'message') {
      const message = r.body as SourceMessage;
      out.messages.set(r.id, { digest: r.digest, message, permalink: message.permalink });
    } else out.graph.set(r.id, r.digest);
  }
  return out;
}

/** What changed between the digests now and the stored sources. */
interface SourceDelta {
  /** Facts new or changed (by digest), and facts stored but gone. */
  changedFacts: Set<string>;
  removedFacts: string[];
  /** Source messages new or changed, and stored but gone (deleted, or no fact cites them any more). */
  changedMessages: Set<string>;
  removedMessages: string[];
  /** Fixed page ids (`people`, `decisions`) whose graph list changed. */
  changedGraph: Set<string>;
  unchanged: boolean;
}

export function diffSources(
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  snap: SourceIndex,
  graphRows: readonly SourceRow[],
): SourceDelta {
  const changed = (now: Map<string, string>, stored: Map<string, { digest: string }>) =>
    new Set([...now].filter(([id, d]) => stored.get(id)?.digest !== d).map(([id]) => id));
  const changedFacts = changed(digests.facts, snap.facts);
  const removedFacts = [...snap.facts.keys()].filter((id) => !digests.facts.has(id));
  const changedMessages = changed(digests.messages, snap.messages);
  const removedMessages = [...snap.messages.keys()].filter((id) => !digests.messages.has(id));
  const changedGraph = new Set(graphRows.filter((r) => snap.graph.get(r.id) !== r.digest).map((r) => r.id));
  return {
    changedFacts,
    removedFacts,
    changedMessages,
    removedMessages,
    changedGraph,
    unchanged:
      changedFacts.size + removedFacts.length + changedMessages.size + removedMessages.length + changedGraph.size === 0,
  };
}

/** The graph's people and decisions as source rows (digest: sha-free canonical JSON; `unavailable` when down). */
export function graphSourceRows(graph: { people: WikiPerson[] | null; decisions: WikiDecision[] | null }): SourceRow[] {
  return (['people', 'decisions'] as const).map((id) => {
    const body = graph[id];
    return { kind: 'graph', id, digest: body === null ? 'unavailable' : canonical(body), body };
  });
}

/**
 * The channel's facts and source messages for this run, and the update of the stored sources. Full (`incremental`
 * null): every fact (listMemories, getMemories) and every message a fact came from (getMessages); the sources are
 * replaced. Incremental: the stored facts and messages whose digest is unchanged, plus the new or changed ones read
 * from the document store; the sources get the changed rows and lose the removed ones.
 */
export async function readSources(
  documents: WikiDocumentSource,
  channel: { id: string; name: string },
  digests: { facts: Map<string, string>; messages: Map<string, string> },
  incremental: { snap: SourceIndex; delta: SourceDelta } | null,
  graphRows: readonly SourceRow[],
): Promise<{
  facts: WikiFact[];
  messages: Map<string, SourceMessage>;
  sourceUpdate: { replace: boolean; upsert: SourceRow[]; remove: { kind: string; id: string }[] };
}> {
  const facts: WikiFact[] = [];
  const messages = new Map<string, SourceMessage>();
  let factIds: string[];
  let messageIds: string[];
  if (incremental) {
    const { snap, delta } = incremental;
    for (const [id, s] of snap.facts) if (digests.facts.has(id) && !delta.changedFacts.has(id)) facts.push(s.fact);
    for (const [id, s] of snap.messages)
      if (digests.messages.has(id) && !delta.changedMessages.has(id)) messages.set(id, s.message);
    factIds = [...delta.changedFacts];
    messageIds = [...delta.changedMessages];
  } else {
    factIds = await listFactIds(documents, channel.id);
    messageIds = [...digests.messages.keys()];
  }
  const fresh: WikiFact[] = [];
  for (let i = 0; i < factIds.length; i += PAGE_SIZE) {
    const detail = await documents.getMemories(factIds.slice(i, i + PAGE_SIZE));
    for (const m of detail.values()) fresh.push(toWikiFact(m));
  }
  facts.push(...fresh);
  // A message view has no permalink: it is taken from the facts of that message.
  const permalinks = new Map(facts.map((f) => [f.source_message_id, f.permalink]));
  const freshMessages: SourceMessage[] = [];
  for (const m of await documents.getMessages(channel.id, messageIds)) {
    const message: SourceMessage = {
      id: m.id,
      channel_id: channel.id,
      channel_name: channel.name,
      author: m.author.name,
      timestamp: m.timestamp,
      text: m.text,
      permalink: permalinks.get(m.id) ?? '',
      attachments: m.attachments.map((a) => ({ name: a.name, media_type: a.media_type ?? null })),
    };
    messages.set(m.id, message);
    freshMessages.push(message);
  }
  facts.sort((a, b) => a.id.localeCompare(b.id));
  const upsert: SourceRow[] = [
    ...fresh.flatMap((f) => {
      const digest = digests.facts.get(f.id);
      return digest ? [{ kind: 'fact' as const, id: f.id, digest, body: f }] : [];
    }),
    ...freshMessages.flatMap((m) => {
      const digest = digests.messages.get(m.id);
      return digest ? [{ kind: 'message' as const, id: m.id, digest, body: m }] : [];
    }),
    ...graphRows.filter((r) => !incremental || incremental.delta.changedGraph.has(r.id)),
  ];
  const remove = incremental
    ? [
        ...incremental.delta.removedFacts.map((id) => ({ kind: 'fact', id })),
        ...incremental.delta.removedMessages.map((id) => ({ kind: 'message', id })),
      ]
    : [];
  return { facts, messages, sourceUpdate: { replace: !incremental, upsert, remove } };
}

/** Ids of every fact of the channel (all pages of listMemories). */
export async function listFactIds(documents: WikiDocumentSource, channelId: string): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const { rows, total } = await documents.listMemories({ channelId, page, limit: PAGE_SIZE });
    ids.push(...rows.map((r) => r.id));
    if (rows.length < PAGE_SIZE || ids.length >= total) break;
  }
  return ids;
}

/**
 * The result of an incremental run that has nothing to do: the current version as recorded (its metadata holds the
 * counts, stats and citation check of the run that generated it) and the stored clusters. null when the metadata
 * lacks them (a version saved by something else): then the run goes on.
 */
export async function unchangedResult(
  wiki: WikiSink,
  channelId: string,
  current: { version_number: number; page_count: number; metadata: Record<string, unknown> },
): Promise<Omit<WikiGenerateResult, 'durationMs' | 'channelId'> | null> {
  const m = current.metadata as {
    facts?: number;
    facts_with_vectors?: number;
    citations?: { total: number; verified: number };
    graph_available?: boolean;
    stats?: ClusterStats;
  };
  if (m.facts === undefined || !m.citations || !m.stats || m.facts_with_vectors === undefined) return null;
  const clusters = await wiki.clusters(channelId);
  return {
    mode: 'incremental',
    skipped: true,
    version: current.version_number,
    pagesRebuilt: 0,
    pagesKept: current.page_count,
    rebuiltPageIds: [],
    pages: current.page_count,
    facts: m.facts,
    factsWithVectors: m.facts_with_vectors,
    clusters,
    touchedClusters: [],
    stats: m.stats,
    citations: m.citations,
    graphAvailable: m.graph_available ?? true,
    rebuiltBecause: { touched: 0, moved: 0, stale: 0 },
    renumberedPageIds: [],
    phasesMs: { read: 0, cluster: 0, render: 0, save: 0 },
  };
}

/**
 * A stored page may stand in for its re-render only when its place in the wiki is unchanged: same id, slug, title,
 * section number, parent and children nodes (a new cluster that outgrows an old one renumbers the topics after it;
 * such a page is re-rendered so that it agrees with the structure).
 */
export function keepable(old: WikiPage, fresh: WikiPagePlace): boolean {
  return (
    old.slug === fresh.slug &&
    old.title === fresh.title &&
    old.section_number === fresh.section_number &&
    old.parent_id === fresh.parent_id &&
    canonical(old.children) === canonical(fresh.children)
  );
}

/** JSON with object keys sorted: a stored page comes back from jsonb with its keys reordered. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

/** A memory (detail form plus permalink, as DocumentStore.getMemories answers) as the wiki reads it. */
export const toWikiFact = (m: MemoryRecord): WikiFact => ({
  id: m.id,
  channel_id: m.channel_id,
  memory_text: m.memory_text,
  quality_score: m.quality_score,
  importance: m.importance as WikiFact['importance'],
  fact_type: m.fact_type as WikiFact['fact_type'],
  topic_tags: m.topic_tags,
  entity_tags: m.entity_tags,
  author_name: m.author_name,
  message_ts: m.message_ts,
  source_message_id: m.source_message_id,
  permalink: m.permalink,
  superseded_by: m.superseded_by,
});

/** People (with their mention counts) and decisions from the graph store; both null when it throws. */
export async function readGraph(
  graph: WikiGraphSource,
  channelId: string,
): Promise<{ people: WikiPerson[] | null; decisions: WikiDecision[] | null }> {
  try {
    const [persons, decided] = await Promise.all([
      graph.listEntities({ channelId, type: 'Person', limit: GRAPH_LIMIT }),
      graph.listEntities({ channelId, type: 'Decision', limit: GRAPH_LIMIT }),
    ]);
    return {
      people: persons.map((p) => ({ name: p.name, fact_count: p.mention_count })),
      decisions: decided.map((d) => ({
        name: d.name,
        decided_by: d.properties.decided_by ?? '',
        status: d.properties.superseded_by ? 'superseded' : (d.properties.status ?? 'unknown'),
        date: d.properties.date ?? d.message_ts.slice(0, 10),
        context: d.properties.context ?? '',
        ...(d.source_fact_ids[0] ? { fact_id: d.source_fact_ids[0] } : {}),
      })),
    };
  } catch {
    return { people: null, decisions: null };
  }
}

/**
 * The source rows a version saves: `upsert` (from readSources) with each fact row's body carrying the excerpt the
 * render used (`excerpts`, else the one known from the stored sources), plus the rows of unchanged facts whose
 * excerpt is new; a fact without a digest in `factDigests` is left out. Each fact body is recorded in FACT_BODIES, so
 * the next run's indexSources splits it back into this very fact object and the render's per-fact memos
 * (RenderMemo.cited: the verified citation) carry over to it.
 */
export function sourceUpsert(
  upsert: readonly SourceRow[],
  excerpts: ReadonlyMap<string, string | null>,
  knownExcerpts: ReadonlyMap<string, string | null>,
  byId: ReadonlyMap<string, WikiFact>,
  factDigests: ReadonlyMap<string, string>,
): SourceRow[] {
  const factRows = new Map(upsert.filter((r) => r.kind === 'fact').map((r) => [r.id, r.body as WikiFact]));
  for (const [id, excerpt] of excerpts)
    if (!factRows.has(id) && knownExcerpts.get(id) !== excerpt && byId.has(id)) factRows.set(id, byId.get(id)!);
  return [
    ...upsert.filter((r) => r.kind !== 'fact'),
    ...[...factRows].flatMap(([id, fact]) => {
      const digest = factDigests.get(id);
      const excerpt = excerpts.has(id) ? excerpts.get(id) : knownExcerpts.get(id);
      if (!digest) return [];
      const body = excerpt === undefined ? fact : { ...fact, excerpt };
      FACT_BODIES.set(body, { fact, excerpt });
      return [{ kind: 'fact' as const, id, digest, body }];
    }),
  ];
}
