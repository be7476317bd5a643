import { modelOfVector } from '@atlas/providers';
import type { AskCitation, DocumentStore, MemoryDetailView, MessageView } from '@atlas/stores';
import { renderMarkup } from '@atlas/wiki';
import { type GraphExpansion, runSearch, type SearchDegradation } from '../search.js';
import { type AskEvidence, contentTerms, termCoverage } from './abstain.js';
import { type AskRoute, classifyQuestion } from './router.js';
import type { AskLlm, AskPorts, AskSource } from './types.js';

/** Graph retrieval timeout (spec "Degraded behaviour": graph store 5 s), ms. */
const GRAPH_TIMEOUT_MS = 5_000;

/**
 * Words of a question that say how it is asked, not what about ("what are people saying about", "can you tell me
 * how"): left out of the search query, so that the keyword index matches on the subject (its common-terms cutoff
 * would otherwise drop a subject common in the channel and match on "saying").
 */
const QUESTION_WORDS = new Set(
  `what whats which who whom whose when where why how is are was were be been do does did done can could would should
  shall will may might must please tell me us you your anyone anybody someone somebody know knows think thinks thought
  say says said saying talk talks talking talked discuss discusses discussed discussing mention mentions mentioned
  people person team folks everyone guys explain describe give show list about regarding any some there here a an the
  of to in on for with and or i we our it its this that these those get got have has had`.split(/\s+/),
);

/** The search query of a question: its words without QUESTION_WORDS (the question itself when nothing is left). */
export function retrievalQuery(question: string): string {
  const kept = question.split(/\s+/).filter(
    (w) =>
      !QUESTION_WORDS.has(
        w
          .toLowerCase()
          .replace(/[^\p{L}\p{N}']/gu, '')
          .replace(/'s$/, ''),
      ),
  );
  const out = kept
    .join(' ')
    .replace(/[?!.]+$/, '')
    .trim();
  return out.length > 0 ? out : question;
}

/**
 * The question's route (the caller asks only when there is a graph; without one every route is semantic): the
 * fast tier's when it answers, else the regex classifier (classifyQuestion).
 */
export async function routeOf(
  fast: AskLlm | null,
  question: string,
  signal: AbortSignal | undefined,
): Promise<AskRoute> {
  if (fast?.route) {
    try {
      return await fast.route(question, signal ? { signal } : {});
    } catch {
      // The fast tier is unavailable: its last resort is the regex classifier.
    }
  }
  return classifyQuestion(question);
}

/**
 * Graph-expanded retrieval of a question (fact id → graph score), or null when there is no graph or it fails or takes
 * over 5 s (spec "Degraded behaviour": graph timeout → semantic-only results).
 */
export async function graphScoresOf(
  graphRetrieval: GraphExpansion | null,
  query: string,
  channelId: string | null,
): Promise<Map<string, number> | null> {
  if (!graphRetrieval) return null;
  return withTimeout(graphRetrieval(query, channelId), GRAPH_TIMEOUT_MS).catch(() => null);
}

/**
 * The sources of an answer: hybrid search over the scope's facts (with `graphScores`, graph-expanded: those facts
 * join the candidates, search.ts GRAPH_WEIGHT), each with its citation: the source
 * message's author, channel name, time, permalink, first attachment, and the first 100 characters of its text
 * (platform markup rendered: mentions, links and entities as a reader sees them). `channels`: only facts of these
 * channels (a restricted caller's, AskRequest.channels). `asOf` (ISO 8601 UTC): only facts stated by then, with their
 * validity then (issue 27 point 2, runSearch's as_of). Also the evidence for the abstention decision (AskEvidence):
 * the raw cosine of the query vector search embedded (captured, not embedded again) to each source's stored vector,
 * the best of them, and the sources' coverage of the query's content terms.
 */
export async function retrieve(
  ports: Pick<AskPorts, 'search' | 'documents'>,
  query: string,
  channelId: string | null,
  limit: number,
  graphScores: Map<string, number> | null,
  channels?: readonly string[],
  asOf?: string,
): Promise<{ sources: AskSource[]; degraded: ReadonlySet<SearchDegradation>; evidence: AskEvidence }> {
  const base = ports.search.vectors;
  let queryVector: number[] | null = null;
  // The embedder as search sees it, keeping the query's vector for the evidence.
  const vectors = base && {
    store: base.store,
    embedder: {
      id: base.embedder.id,
      dim: base.embedder.dim,
      modelOf: (v: readonly number[]) => base.embedder.modelOf?.(v),
      embed: async (texts: readonly string[], opts?: Parameters<typeof base.embedder.embed>[1]) => {
        const out = await base.embedder.embed(texts, opts);
        if (opts?.kind === 'query') queryVector = out[0] ?? null;
        return out;
      },
    },
  };
  const {
    response,
    memories: facts,
    degraded,
  } = await runSearch(
    { ...ports.search, vectors, graphExpansion: graphScores ? async () => graphScores : null },
    {
      query,
      channel_id: channelId,
      limit,
      include_citations: false,
      search_mode: 'hybrid',
      fuzzy: false,
      as_of: asOf,
    },
    { count: false, channels },
  );
  const noEvidence: AskEvidence = { embedderId: null, bestCosine: null, termCoverage: 0 };
  if (response.results.length === 0) return { sources: [], degraded, evidence: noEvidence };
  const keys = new Map<string, { channelId: string; id: string }>();
  for (const r of response.results) {
    const f = facts.get(r.memory.id);
    if (f)
      keys.set(`${f.channel_id}\u0000${f.source_message_id}`, { channelId: f.channel_id, id: f.source_message_id });
  }
  const messages = new Map<string, MessageView>();
  for (const { channelId, message } of await ports.documents.getMessagesIn([...keys.values()]))
    messages.set(`${channelId}\u0000${message.id}`, message);
  const names = await channelNames(ports.documents, [...new Set([...keys.values()].map((k) => k.channelId))]);
  // One source number per source message (facts of one message share its citation), in rank order.
  const numbers = new Map<string, number>();
  const sources = response.results.flatMap((r) => {
    const f = facts.get(r.memory.id);
    if (!f) return [];
    const key = `${f.channel_id}\u0000${f.source_message_id}`;
    if (!numbers.has(key)) numbers.set(key, numbers.size + 1);
    const n = numbers.get(key)!;
    return [{ n, fact: f, score: r.score, citation: citationOf(n, f, messages.get(key), names) }];
  });
  const coverage = termCoverage(contentTerms(query), sources);
  const vector: number[] | null = queryVector;
  if (!base || !vector || degraded.has('vector_store') || degraded.has('embedding_provider'))
    return { sources, degraded, evidence: { ...noEvidence, termCoverage: coverage } };
  // The model that made the query's vector (a switch of the vector space may have come since): its space, and the
  // abstention threshold of that model.
  const model = modelOfVector(base.embedder, vector);
  const sims = await base.store
    .similarities({ vector, model, factIds: sources.map((s) => s.fact.id) })
    .catch(() => null); // the vector store failing now: no cosine, the answer is not withheld
  const cosines = sims ? [...sims.values()] : [];
  return {
    sources,
    degraded,
    evidence: {
      embedderId: cosines.length ? model : null,
      bestCosine: cosines.length ? Math.max(...cosines) : null,
      termCoverage: coverage,
    },
  };
}

/**
 * Source `n`'s citation: the source message's author, channel name, time, permalink and first attachment, and the
 * first 100 characters of its text (platform markup rendered); the fact's own fields where the message is missing.
 */
function citationOf(
  n: number,
  f: MemoryDetailView & { permalink: string },
  msg: MessageView | undefined,
  names: ReadonlyMap<string, string>,
): AskCitation {
  const attachment = msg?.attachments[0];
  const text = renderMarkup(msg?.text ?? f.memory_text)
    .replace(/\s+/g, ' ')
    .trim();
  const media: AskCitation['media_type'] = attachment
    ? attachment.mime_type === 'application/pdf' || /\.pdf$/i.test(attachment.name)
      ? 'pdf'
      : (attachment.mime_type ?? attachment.media_type ?? '').startsWith('image')
        ? 'image'
        : 'link'
    : /https?:\/\//.test(text)
      ? 'link'
      : null;
  return {
    id: `[${n}]`,
    author: msg?.author.name ?? f.author_name,
    channel: names.get(f.channel_id) ?? f.channel_id,
    timestamp: new Date(msg?.timestamp ?? f.message_ts).toISOString(),
    text_excerpt: [...text].slice(0, 100).join(''),
    permalink: f.permalink,
    source_message_id: f.source_message_id,
    media_type: media,
    media_name: attachment?.name ?? null,
  };
}

const channelNameCache = new WeakMap<object, { at: number; names: Map<string, string> }>();
/** Channel id → name (listChannels, cached for 60 s per store; re-read when an id is unknown). */
async function channelNames(
  documents: Pick<DocumentStore, 'listChannels'>,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const hit = channelNameCache.get(documents);
  if (hit && Date.now() - hit.at < 60_000 && ids.every((id) => hit.names.has(id))) return hit.names;
  const names = new Map((await documents.listChannels()).map((c) => [c.id, c.name]));
  channelNameCache.set(documents, { at: Date.now(), names });
  return names;
}

const withTimeout = <T>(p: Promise<T>, ms: number): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
