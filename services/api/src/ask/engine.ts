import { randomUUID } from 'node:crypto';
import type { AskCitation, AskMessage, AskStore, DocumentStore, MemoryDetailView, MessageView } from '@atlas/stores';
import { factText, renderMarkup } from '@atlas/wiki';
import { z } from 'zod';
import { type GraphExpansion, type SearchPorts, searchMemories } from '../search.js';
import { type AskRoute, classifyQuestion } from './router.js';
import { dayText, whenOf } from './when.js';

/** Body of POST /api/ask and POST /api/channels/{channel_id}/ask (spec "Ask"; Limits: max_results 1 to 50). */
export const AskBody = z.object({
  question: z.string().trim().min(1, 'question must not be empty').max(4000),
  include_citations: z.boolean().default(true),
  max_results: z.number().int().min(1).max(50).default(10),
  session_id: z.string().min(1).max(200).optional(),
  mode: z.enum(['quick', 'deep', 'summarize']).default('deep'),
  attachments: z
    .array(z.object({ name: z.string().min(1).max(255), content_type: z.string().min(1).max(200), data: z.string() }))
    .max(5)
    .default([]),
});
export type AskBody = z.infer<typeof AskBody>;

/** Spec "Events → Ask stream": the four event types, as the JSON of one `data:` line. */
export type AskEvent =
  | { type: 'token'; content: string; message_id: string; is_complete?: boolean }
  | { type: 'citation'; citation: AskCitation }
  | {
      type: 'done';
      message_id: string;
      session_id: string;
      tokens_used: number;
      citations_count: number;
      duration_ms: number;
    }
  | {
      type: 'error';
      error: string;
      code?: 'RATE_LIMIT_EXCEEDED' | 'INVALID_REQUEST' | 'INTERNAL_ERROR';
      retry_after?: number;
    };

/** A chat message as sent to an LLM (OpenAI chat shape; image parts only for a model that accepts images). */
export interface AskChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ({ type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } })[];
}

/**
 * What the ask engine needs of an LLM tier (the quality chain for answers, the fast chain for routing): a stream of
 * text deltas that throws before its first delta when no provider of the tier answered (the engine then uses the
 * tier's last resort) and may throw mid-stream (the engine finishes the answer from the retrieved results), and the
 * token usage once done.
 */
export interface AskLlm {
  readonly acceptsImages: boolean;
  stream(
    messages: AskChatMessage[],
    opts: { signal?: AbortSignal; maxTokens?: number },
  ): AsyncIterable<string> & { usage(): { prompt_tokens: number; completion_tokens: number } | null };
  /** The route of a question, asked of the fast tier (structured output); throws when the tier is unavailable. */
  route?(question: string, opts: { signal?: AbortSignal }): Promise<AskRoute>;
}

/** Context extracted from an uploaded file or a base64 attachment: text, or an image for a model that accepts it. */
export type AskAttachment =
  | { kind: 'text'; name: string; mediaType: 'pdf' | 'link' | null; text: string }
  | { kind: 'image'; name: string; contentType: string; base64: string };

/** The stores and providers the ask engine reads. */
export interface AskPorts {
  search: SearchPorts;
  documents: DocumentStore;
  /** Graph-expanded retrieval for `graph` and `both` routes; null when there is no graph (semantic only). */
  graphRetrieval: GraphExpansion | null;
  store: AskStore;
  /** The quality tier (answers) and fast tier (routing); null offline: extractive answers, regex routing. */
  llm: { quality: AskLlm | null; fast: AskLlm | null };
  /**
   * Web search for external sub-queries (packages/providers WebSearchProvider, behind its 5 s breaker); absent or
   * null: none configured (the spec's default), answers are internal only and say nothing about it.
   */
  webSearch?: {
    search(query: string, opts: { limit?: number; signal?: AbortSignal }): Promise<AskWebResult[]>;
  } | null;
  /**
   * The stored (cached) wiki: a channel's current pages. Answers come from it when the vector store and the graph
   * store are both down (spec "Query fallbacks"); absent: that case answers the "temporarily unavailable" error.
   */
  wiki?: { pages(channelId: string): Promise<AskWikiPage[]> } | null;
  /** Clock (tests). */
  now?: () => Date;
}

/** A web search result as ask shows it. */
export interface AskWebResult {
  title: string;
  url: string;
  snippet: string;
}

/** What ask reads of a stored wiki page. */
export interface AskWikiPage {
  title: string;
  slug: string;
  summary: string;
  content: string;
}

/** A request the engine answers: the validated body, its scope, and attachments already extracted. */
export interface AskRequest {
  body: AskBody;
  /** null: every channel (POST /api/ask); else the channel of a channel-scoped ask. */
  channelId: string | null;
  attachments: AskAttachment[];
  signal?: AbortSignal;
}

/**
 * A retrieved source of an answer: the fact, its rank score and its citation. Sources are numbered by source message
 * in rank order: facts of one message share its number (one citation per message).
 */
export interface AskSource {
  n: number;
  fact: Pick<
    MemoryDetailView,
    | 'id'
    | 'memory_text'
    | 'author_name'
    | 'message_ts'
    | 'channel_id'
    | 'topic_tags'
    | 'fact_type'
    | 'source_message_id'
  >;
  score: number;
  citation: AskCitation;
}

/** Graph retrieval timeout (spec "Degraded behaviour": graph store 5 s), ms. */
const GRAPH_TIMEOUT_MS = 5_000;
/** The note an extractive answer ends with (spec: "with no LLM configured the answer is extractive and says so"). */
export const EXTRACTIVE_NOTE =
  'Extractive answer: no language model is configured, so these are the stored memories that best match the question.';
export const FALLBACK_NOTE =
  'Extractive answer: the language model is unavailable right now, so these are the stored memories that best match the question.';
const INTERRUPTED_NOTE = 'The language model stopped answering; the memories found for the question:';
/** The note when web search is configured but failing (spec: external search timeout → internal-only results with a note). */
export const WEB_SEARCH_NOTE =
  'External search is unavailable right now, so this answer uses only what Atlas knows from your channels.';
/** The note of an answer from the cached wiki (spec: vector and graph store both down → the cached wiki). */
export const CACHED_WIKI_NOTE =
  'Search is temporarily unavailable (the vector store and the graph store are down), so this answer comes from the cached wiki.';
/**
 * The error of an ask when the vector store and the graph store are both down and no cached wiki exists (spec "HTTP
 * statuses": an error object whose message says the system is temporarily unavailable).
 */
export const TEMPORARILY_UNAVAILABLE =
  'Atlas is temporarily unavailable: the vector store and the graph store are both down and there is no cached wiki to answer from. Try again in a minute.';
/** Seconds a client waits before asking again after TEMPORARILY_UNAVAILABLE (a breaker's 30 s reset). */
export const UNAVAILABLE_RETRY_AFTER_S = 30;
/** Web results shown with an answer. */
const WEB_RESULTS = 3;
/** A source is part of an extractive answer when its score is at least this share of the best source's. */
const RELATIVE_FLOOR = 0.6;

/** "7 May 2023" (UTC): the date form the answers use. */
export const answerDate = (iso: string): string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso.slice(0, 10) : dayText(d);
};

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

/** Follow-up wording: a short question or one that points back ("it", "that", "they", ...). */
const FOLLOW_UP = /\b(?:it|its|that|this|those|these|they|them|their|he|him|his|she|her|there|then|same|also|else)\b/i;

/**
 * Answers one ask as the spec's event stream (spec "Events → Ask stream"; states "Ask session"): validates the
 * session (an unknown or other-scope session_id → one INVALID_REQUEST error event), routes the question
 * (fast-tier LLM, else the regex classifier; a failing graph store → semantic), retrieves up to max_results facts
 * (hybrid search, graph-expanded for `graph` / `both`), then streams the answer: from the quality-tier LLM when one
 * is configured (citations `[n]` filtered to real sources; a provider failing before its first token → the chain's
 * next, all failing → the extractive answer with a note; failing mid-stream → the answer finishes with the sources),
 * else extractive (composed from the facts and cited). Each source referenced in the text gets one citation event
 * when its marker first appears. The turn is saved to the session, then `done` closes the stream. Never throws:
 * an unexpected failure becomes an INTERNAL_ERROR event.
 */
export async function* answerAsk(ports: AskPorts, req: AskRequest): AsyncGenerator<AskEvent> {
  const started = performance.now();
  const now = ports.now ?? (() => new Date());
  const { body } = req;
  const messageId = randomUUID();
  try {
    const asked = now();
    let sessionId = body.session_id ?? randomUUID();
    let earlier: AskMessage[] = [];
    if (body.session_id) {
      const ctx = await ports.store.context(body.session_id, { channelId: req.channelId ?? undefined }, asked);
      if (!ctx || ctx.channelId !== req.channelId) {
        yield {
          type: 'error',
          code: 'INVALID_REQUEST',
          error: `session ${body.session_id} does not exist${req.channelId ? ` in channel ${req.channelId}` : ''}`,
        };
        return;
      }
      sessionId = body.session_id;
      earlier = ctx.messages;
    }
    const previousQuestion = [...earlier].reverse().find((m) => m.role === 'user')?.content;
    const query =
      previousQuestion && (FOLLOW_UP.test(body.question) || body.question.split(/\s+/).length < 5)
        ? `${body.question} ${previousQuestion}`
        : body.question;
    const searchQuery = retrievalQuery(query);
    // The external sub-query runs beside retrieval (only when a web search provider is configured).
    const web = webResultsOf(ports, body.question, req.signal);
    const routed = await routeOf(ports, body.question, req.signal);
    // graph / both: the graph's facts for the question; the graph failing or slow → semantic (spec degraded mode).
    let graphScores = routed === 'semantic' ? null : await graphScoresOf(ports, searchQuery, req.channelId);
    const route: AskRoute = graphScores ? routed : 'semantic';
    const degraded = new Set<'vector_store' | 'embedding_provider'>();
    let sources = await retrieve(ports, searchQuery, req.channelId, body.max_results, graphScores, degraded);
    let wikiAnswer: string | null = null;
    if (degraded.has('vector_store')) {
      // Spec "Query fallbacks": vector store down → graph results (beside the keyword index's); both down → the
      // cached wiki; no cached wiki → the "temporarily unavailable" error object.
      if (!graphScores && routed === 'semantic') {
        graphScores = await graphScoresOf(ports, searchQuery, req.channelId);
        if (graphScores)
          sources = await retrieve(ports, searchQuery, req.channelId, body.max_results, graphScores, degraded);
      }
      if (!graphScores) {
        wikiAnswer = await cachedWikiAnswer(ports, body.question, req.channelId);
        if (wikiAnswer === null) {
          yield {
            type: 'error',
            code: 'INTERNAL_ERROR',
            error: TEMPORARILY_UNAVAILABLE,
            retry_after: UNAVAILABLE_RETRY_AFTER_S,
          };
          return;
        }
        sources = [];
      }
    }
    const texts = req.attachments.filter((a) => a.kind === 'text');
    const images = req.attachments.flatMap((a) => (a.kind === 'image' ? [a.name] : []));
    const quality = ports.llm.quality;

    const out = new AnswerStream(messageId, sources, body.include_citations);
    let tokensUsed = 0;
    let answered = false;
    if (wikiAnswer !== null) {
      yield* out.push(wikiAnswer);
      yield* out.flush();
      tokensUsed = estimateTokens(out.text);
    } else if (quality) {
      const stream = quality.stream(promptOf(body, sources, earlier, req.attachments, quality.acceptsImages), {
        ...(req.signal ? { signal: req.signal } : {}),
      });
      try {
        for await (const delta of stream) {
          answered = true;
          yield* out.push(delta);
        }
        yield* out.flush();
        const usage = stream.usage();
        tokensUsed = usage ? usage.prompt_tokens + usage.completion_tokens : estimateTokens(out.text);
      } catch (err) {
        if (req.signal?.aborted) return;
        yield* out.flush();
        if (answered) {
          // Mid-stream: what was said stands; the retrieved sources finish the answer.
          yield* out.push(
            `\n\n${INTERRUPTED_NOTE}\n\n${extractiveAnswer(body.question, sources, 'deep', texts, null)}`,
          );
        } else {
          yield* out.push(extractiveAnswer(body.question, sources, body.mode, texts, FALLBACK_NOTE, images));
        }
        yield* out.flush();
        tokensUsed = estimateTokens(out.text);
        void err;
      }
    } else {
      yield* out.push(extractiveAnswer(body.question, sources, body.mode, texts, EXTRACTIVE_NOTE, images));
      yield* out.flush();
      tokensUsed = estimateTokens(out.text);
    }
    if (req.signal?.aborted) return;
    // Web results follow the answer; a configured provider that failed leaves a note (spec: internal-only results).
    const external = await web;
    if (external) {
      yield* out.push(webSection(external));
      yield* out.flush();
      tokensUsed += estimateTokens(webSection(external));
    }
    const durationMs = Math.round(performance.now() - started);
    await ports.store.recordTurn({
      sessionId,
      channelId: req.channelId,
      question: { message_id: randomUUID(), content: body.question, timestamp: asked.toISOString() },
      answer: {
        message_id: messageId,
        content: out.text,
        citations: out.citations,
        timestamp: now().toISOString(),
        metadata: {
          mode: body.mode,
          route,
          tokens_used: tokensUsed,
          duration_ms: durationMs,
          answered_by: quality && answered ? 'llm' : 'extractive',
        },
      },
    });
    yield {
      type: 'done',
      message_id: messageId,
      session_id: sessionId,
      tokens_used: tokensUsed,
      citations_count: out.citations.length,
      duration_ms: durationMs,
    };
  } catch (err) {
    if (req.signal?.aborted) return;
    yield { type: 'error', code: 'INTERNAL_ERROR', error: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * The web search of the question (at most WEB_RESULTS), started now: resolves to the results, to `null` when no
 * provider is configured, or to `{failed: true}` when it is down, slow (5 s breaker timeout) or its breaker is open.
 */
function webResultsOf(
  ports: AskPorts,
  question: string,
  signal: AbortSignal | undefined,
): Promise<{ results: AskWebResult[] } | { failed: true } | null> {
  if (!ports.webSearch) return Promise.resolve(null);
  return ports.webSearch.search(question, { limit: WEB_RESULTS, ...(signal ? { signal } : {}) }).then(
    (results) => ({ results }),
    () => ({ failed: true as const }),
  );
}

/** The text that follows an answer: web results as links, the note when web search failed, nothing for none found. */
function webSection(web: { results: AskWebResult[] } | { failed: true }): string {
  if ('failed' in web) return `\n\n_${WEB_SEARCH_NOTE}_`;
  if (web.results.length === 0) return '';
  const line = (r: AskWebResult) =>
    `- [${escapeMarkers(r.title).replace(/[[\]]/g, '')}](${r.url})${r.snippet ? `: ${escapeMarkers(r.snippet)}` : ''}`;
  return `\n\nFrom the web:\n${web.results.map(line).join('\n')}`;
}

/**
 * The answer from the cached wiki when search cannot run (vector and graph store down): the stored pages of the
 * scope's channels (the ask's channel, or every channel) that share the most words with the question, up to three,
 * each as its title and summary, then CACHED_WIKI_NOTE. null when no page of the scope exists (or none can be read).
 */
export async function cachedWikiAnswer(
  ports: Pick<AskPorts, 'wiki' | 'documents'>,
  question: string,
  channelId: string | null,
): Promise<string | null> {
  if (!ports.wiki) return null;
  const wiki = ports.wiki;
  try {
    const channels = channelId ? [channelId] : (await ports.documents.listChannels()).map((c) => c.id);
    const pages = (await Promise.all(channels.map((c) => wiki.pages(c).catch(() => [] as AskWikiPage[])))).flat();
    if (pages.length === 0) return null;
    const words = new Set(question.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);
    const scored = pages
      .map((p) => {
        const text = `${p.title} ${p.summary} ${p.content}`.toLowerCase();
        let score = 0;
        for (const w of words) if (text.includes(w)) score++;
        return { p, score };
      })
      .sort((a, b) => b.score - a.score);
    const chosen = (scored[0]!.score > 0 ? scored.filter((x) => x.score > 0) : scored).slice(0, 3);
    const plain = (t: string) => t.replace(/\s*\[\d{1,3}\]/g, '').trim(); // no source markers: no citations here
    const lines = chosen.map(({ p }) => `**${plain(p.title)}**: ${plain(p.summary) || plain(p.content).slice(0, 300)}`);
    return `${lines.join('\n\n')}\n\n_${CACHED_WIKI_NOTE}_`;
  } catch {
    return null;
  }
}

/** ≈ tokens of a text for tokens_used when no model reported usage: one per 4 characters (OpenAI's rule of thumb). */
const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/** The question's route: the fast tier when it answers, else the regex classifier; no graph → semantic. */
async function routeOf(ports: AskPorts, question: string, signal: AbortSignal | undefined): Promise<AskRoute> {
  if (!ports.graphRetrieval) return 'semantic';
  const fast = ports.llm.fast;
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
  ports: Pick<AskPorts, 'graphRetrieval'>,
  query: string,
  channelId: string | null,
): Promise<Map<string, number> | null> {
  if (!ports.graphRetrieval) return null;
  return withTimeout(ports.graphRetrieval(query, channelId), GRAPH_TIMEOUT_MS).catch(() => null);
}

/**
 * The sources of an answer: hybrid search over the scope's facts (with `graphScores`, graph-expanded: those facts
 * join the candidates, search.ts GRAPH_WEIGHT), each with its citation: the source
 * message's author, channel name, time, permalink, first attachment, and the first 100 characters of its text
 * (platform markup rendered: mentions, links and entities as a reader sees them).
 */
export async function retrieve(
  ports: AskPorts,
  query: string,
  channelId: string | null,
  limit: number,
  graphScores: Map<string, number> | null,
  degraded?: Set<'vector_store' | 'embedding_provider'>,
): Promise<AskSource[]> {
  const facts = new Map<string, MemoryDetailView & { permalink: string }>();
  const found = await searchMemories(
    { ...ports.search, graphExpansion: graphScores ? async () => graphScores : null },
    {
      query,
      channel_id: channelId,
      limit,
      include_citations: false,
      search_mode: 'hybrid',
      fuzzy: false,
    },
    { count: false, memories: facts, ...(degraded ? { degraded } : {}) },
  );
  if (found.results.length === 0) return [];
  const keys = new Map<string, { channelId: string; id: string }>();
  for (const r of found.results) {
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
  return found.results.flatMap((r) => {
    const f = facts.get(r.memory.id);
    if (!f) return [];
    const key = `${f.channel_id}\u0000${f.source_message_id}`;
    if (!numbers.has(key)) numbers.set(key, numbers.size + 1);
    const i = numbers.get(key)! - 1;
    const msg = messages.get(key);
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
    return [
      {
        n: i + 1,
        fact: f,
        score: r.score,
        citation: {
          id: `[${i + 1}]`,
          author: msg?.author.name ?? f.author_name,
          channel: names.get(f.channel_id) ?? f.channel_id,
          timestamp: new Date(msg?.timestamp ?? f.message_ts).toISOString(),
          text_excerpt: [...text].slice(0, 100).join(''),
          permalink: f.permalink,
          source_message_id: f.source_message_id,
          media_type: media,
          media_name: attachment?.name ?? null,
        },
      },
    ];
  });
}

const channelNameCache = new WeakMap<DocumentStore, { at: number; names: Map<string, string> }>();
/** Channel id → name (listChannels, cached for 60 s per store; re-read when an id is unknown). */
async function channelNames(documents: DocumentStore, ids: readonly string[]): Promise<Map<string, string>> {
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

/**
 * The extractive answer (no LLM, or the LLM unavailable): the sources scoring at least 60% of the best, as cited
 * lines "<fact> (<author>, <date>) [n]" (a question starting with "when": "<when>: <fact> (<author>) [n]", the
 * fact's own time resolved against its message's date, whenOf). `quick`: the best source, and up to two more within
 * 90% of it; `deep`: every
 * such source, one per line; `summarize`: grouped by their first topic tag. Text from attachments leads when given.
 * `note` (when not null) ends the answer, saying it is extractive; `unreadImages` (names) are said to be unread. No
 * source: says nothing was found.
 */
export function extractiveAnswer(
  question: string,
  sources: readonly AskSource[],
  mode: AskBody['mode'],
  attachments: readonly Extract<AskAttachment, { kind: 'text' }>[],
  note: string | null,
  unreadImages: readonly string[] = [],
): string {
  const best = sources[0]?.score ?? 0;
  const floor = mode === 'quick' ? 0.9 : RELATIVE_FLOOR;
  const chosen = sources.filter((s) => s.score >= best * floor).slice(0, mode === 'quick' ? 3 : sources.length);
  const when = /^\s*when\b/i.test(question);
  // A `when` question: each fact opens with its own time resolved against its message's date (whenOf).
  const line = (s: AskSource) =>
    when
      ? `${whenOf(factText(s.fact), s.fact.message_ts)}: ${quoted(s.fact)} (${s.fact.author_name}) ${s.citation.id}`
      : `${quoted(s.fact)} (${s.fact.author_name}, ${answerDate(s.fact.message_ts)}) ${s.citation.id}`;
  const parts: string[] = [];
  for (const a of attachments)
    parts.push(
      a.text.trim() ? `From ${a.name}: ${escapeMarkers(passage(question, a.text))}` : `${a.name} has no text to read.`,
    );
  for (const name of unreadImages)
    parts.push(`The image ${name} was not read: no model that accepts images is configured.`);
  if (chosen.length === 0) parts.push('I found nothing in the knowledge base about that.');
  else if (mode === 'quick') {
    const [first, ...rest] = chosen;
    parts.push(line(first!));
    if (rest.length) parts.push(rest.map((s) => `Also: ${line(s)}`).join('\n'));
  } else if (mode === 'summarize') {
    const groups = new Map<string, AskSource[]>();
    for (const s of chosen) {
      const topic = s.fact.topic_tags[0] ?? 'general';
      groups.set(topic, [...(groups.get(topic) ?? []), s]);
    }
    parts.push(
      `${chosen.length} memories on ${groups.size} topic${groups.size === 1 ? '' : 's'}:`,
      [...groups]
        .map(([topic, ss]) => `- **${topic}**: ${ss.map((s) => `${quoted(s.fact)} ${s.citation.id}`).join('; ')}`)
        .join('\n'),
    );
  } else parts.push(chosen.map((s) => `- ${line(s)}`).join('\n'));
  if (note) parts.push(`_${note}_`);
  return parts.join('\n\n');
}

/**
 * Quoted text with its own `[n]` (code such as `xs[0]`, a footnote) written `\[n\]` (Markdown shows `[n]`): a
 * reference in the answer is only a citation marker we put there (spec "Ask stream": every `[n]` has its citation).
 */
export const escapeMarkers = (text: string): string => text.replace(/\[(\d{1,3})\]/g, '\\[$1\\]');

const quoted = (fact: AskSource['fact']): string => escapeMarkers(factText(fact));

/** The sentence(s) of an attachment's text sharing the most words with the question (at most 400 characters). */
function passage(question: string, text: string): string {
  const words = new Set(question.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []);
  const sentences = text.split(/(?<=[.!?])\s+|\n+/).filter((s) => s.trim().length > 0);
  let best = sentences[0] ?? '';
  let bestHits = -1;
  for (const s of sentences) {
    const hits = (s.toLowerCase().match(/[\p{L}\p{N}]{3,}/gu) ?? []).filter((w) => words.has(w)).length;
    if (hits > bestHits) {
      best = s;
      bestHits = hits;
    }
  }
  const out = best.replace(/\s+/g, ' ').trim();
  return out.length > 400 ? `${out.slice(0, 399)}…` : out;
}

/** The quality tier's prompt: instructions per mode, the earlier turns, the numbered sources, attachments. */
function promptOf(
  body: AskBody,
  sources: readonly AskSource[],
  earlier: readonly AskMessage[],
  attachments: readonly AskAttachment[],
  acceptsImages: boolean,
): AskChatMessage[] {
  const style = {
    quick: 'Answer in one or two sentences.',
    deep: 'Answer thoroughly but concisely.',
    summarize: 'Summarise what the sources say about the question, grouped by topic.',
  }[body.mode];
  const system = [
    "You answer questions about a team's chat history using only the numbered sources given with the question.",
    'Cite every claim with the number of its source in square brackets, like [1] or [2][3]; cite only numbers that exist.',
    'If the sources do not answer the question, say so plainly.',
    style,
  ].join(' ');
  const numbered = sources
    .map(
      (s) =>
        `${s.citation.id} ${s.fact.author_name}, ${answerDate(s.fact.message_ts)}, #${s.citation.channel}: ${factText(s.fact)}`,
    )
    .join('\n');
  const docs = attachments
    .filter((a) => a.kind === 'text')
    .map((a) => `Attached file ${a.name}:\n${a.text}`)
    .join('\n\n');
  const text = `${sources.length ? `Sources:\n${numbered}` : 'Sources: none found.'}${docs ? `\n\n${docs}` : ''}\n\nQuestion: ${body.question}`;
  const images = acceptsImages ? attachments.filter((a) => a.kind === 'image') : [];
  return [
    { role: 'system', content: system },
    ...earlier.map((m) => ({ role: m.role, content: m.content })),
    {
      role: 'user',
      content: images.length
        ? [
            { type: 'text', text },
            ...images.map((a) => ({
              type: 'image_url' as const,
              image_url: { url: `data:${a.contentType};base64,${a.base64}` },
            })),
          ]
        : text,
    },
  ];
}

/**
 * Turns answer text into token and citation events: markers `[n]` are held back until complete, kept only when n
 * is a source (else dropped; all dropped when citations are off), and the first occurrence of each emits that
 * source's citation event (spec rules 2 and 3: one citation event per source referenced, ids matching the text).
 * Text is emitted as tokens of one word (with its following space) each.
 */
class AnswerStream {
  text = '';
  readonly citations: AskCitation[] = [];
  private pending = '';
  private readonly cited = new Set<number>();
  constructor(
    private readonly messageId: string,
    private readonly sources: readonly AskSource[],
    private readonly includeCitations: boolean,
  ) {}

  *push(delta: string): Generator<AskEvent> {
    this.pending += delta;
    // Emit everything up to a possibly unfinished marker at the end.
    const open = this.pending.lastIndexOf('[');
    const cut =
      open >= 0 && !this.pending.slice(open).includes(']') && this.pending.length - open <= 6
        ? open
        : this.pending.length;
    const ready = this.pending.slice(0, cut);
    this.pending = this.pending.slice(cut);
    yield* this.emit(ready);
  }

  *flush(): Generator<AskEvent> {
    const rest = this.pending;
    this.pending = '';
    yield* this.emit(rest);
  }

  private *emit(text: string): Generator<AskEvent> {
    if (!text) return;
    const fresh: AskCitation[] = [];
    const kept = text.replace(/ ?\[(\d{1,3})\]/g, (whole, num: string) => {
      const n = Number(num);
      const source = this.sources.find((s) => s.n === n);
      if (!source || !this.includeCitations) return '';
      if (!this.cited.has(n)) {
        this.cited.add(n);
        fresh.push(source.citation);
      }
      return whole;
    });
    for (const piece of kept.match(/\S*\s*|\s+/g) ?? []) {
      if (!piece) continue;
      this.text += piece;
      yield { type: 'token', content: piece, message_id: this.messageId };
    }
    for (const c of fresh) {
      this.citations.push(c);
      yield { type: 'citation', citation: c };
    }
  }
}
