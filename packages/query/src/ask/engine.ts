import { randomUUID } from 'node:crypto';
import type { AskMessage, AskStore } from '@atlas/stores';
import { type AskEvidence, abstains, abstentionText, personMismatch, type SearchedScope } from './abstain.js';
import { AnswerStream } from './answer-stream.js';
import { extractiveAnswer } from './extractive.js';
import { cachedWikiAnswer, webResultsOf, webSection } from './fallbacks.js';
import {
  EXTRACTIVE_NOTE,
  FALLBACK_NOTE,
  INTERRUPTED_NOTE,
  TEMPORARILY_UNAVAILABLE,
  UNAVAILABLE_RETRY_AFTER_S,
} from './notes.js';
import { promptOf } from './prompt.js';
import { graphScoresOf, retrievalQuery, retrieve, routeOf } from './retrieve.js';
import type { AskRoute } from './router.js';
import type { AskEvent, AskLlm, AskPorts, AskRequest, AskSource } from './types.js';

/** Follow-up wording: a short question or one that points back ("it", "that", "they", ...). */
const FOLLOW_UP = /\b(?:it|its|that|this|those|these|they|them|their|he|him|his|she|her|there|then|same|also|else)\b/i;

/** ≈ tokens of a text for tokens_used when no model reported usage: one per 4 characters (OpenAI's rule of thumb). */
const estimateTokens = (text: string): number => Math.ceil(text.length / 4);

/**
 * Answers one ask as the spec's event stream (spec "Events → Ask stream"; states "Ask session"): validates the
 * session (an unknown or other-scope session_id → one INVALID_REQUEST error event), routes the question
 * (fast-tier LLM, else the regex classifier; a failing graph store → semantic), retrieves up to max_results facts
 * (hybrid search, graph-expanded for `graph` / `both`), then streams the answer: from the quality-tier LLM when one
 * is configured (citations `[n]` filtered to real sources; a provider failing before its first token → the chain's
 * next, all failing → the extractive answer with a note; failing mid-stream → the answer finishes with the sources),
 * else extractive (composed from the facts and cited). Each source referenced in the text gets one citation event
 * when its marker first appears. The turn is saved to the session, then `done` closes the stream. Never throws:
 * an unexpected failure goes to `req.onError` and becomes an INTERNAL_ERROR event without its text (details.request_id:
 * `req.requestId`).
 */
export async function* answerAsk(ports: AskPorts, req: AskRequest): AsyncGenerator<AskEvent> {
  const started = performance.now();
  const now = ports.now ?? (() => new Date());
  const { body } = req;
  const messageId = randomUUID();
  try {
    const asked = now();
    const session = await sessionOf(ports.store, body.session_id, req.channelId, asked, req.owner);
    if (!session) {
      yield {
        type: 'error',
        code: 'INVALID_REQUEST',
        error: `session ${body.session_id} does not exist${req.channelId ? ` in channel ${req.channelId}` : ''}`,
      };
      return;
    }
    const searchQuery = retrievalQuery(withPreviousQuestion(body.question, session.earlier));
    // The external sub-query runs beside retrieval (only when a web search provider is configured).
    const web = webResultsOf(ports.webSearch, body.question, req.signal);
    const found = await findSources(ports, body.question, searchQuery, req);
    if (!found) {
      yield {
        type: 'error',
        code: 'INTERNAL_ERROR',
        error: TEMPORARILY_UNAVAILABLE,
        retry_after: UNAVAILABLE_RETRY_AFTER_S,
      };
      return;
    }
    // Too weak evidence (abstains): no source is shown or cited; the answer says what was searched instead.
    const abstained = found.wikiAnswer === null && abstains(found.evidence, found.sources.length);
    const abstention = abstained
      ? abstentionText(
          await searchedScope(ports.documents, found.searchQuery, req.channelId, req.channels),
          found.evidence,
          req.channelId === null,
        )
      : null;
    const used: Found = abstained ? { ...found, sources: [] } : found;
    const out = new AnswerStream(messageId, used.sources, body.include_citations);
    const answer = yield* answerText(ports.llm.quality, out, used, session.earlier, req, abstention);
    if (!answer || req.signal?.aborted) return;
    let tokensUsed = answer.tokensUsed;
    // Web results follow the answer; a configured provider that failed leaves a note (spec: internal-only results).
    const external = await web;
    if (external) {
      yield* out.push(webSection(external));
      yield* out.flush();
      tokensUsed += estimateTokens(webSection(external));
    }
    const freshness = await freshnessOf(ports, req, used.sources);
    const durationMs = Math.round(performance.now() - started);
    await ports.store.recordTurn({
      sessionId: session.id,
      channelId: req.channelId,
      owner: req.owner ?? null,
      question: { message_id: randomUUID(), content: body.question, timestamp: asked.toISOString() },
      answer: {
        message_id: messageId,
        content: out.text,
        citations: out.citations,
        timestamp: now().toISOString(),
        metadata: {
          mode: body.mode,
          route: found.route,
          tokens_used: tokensUsed,
          duration_ms: durationMs,
          answered_by: answer.byLlm ? 'llm' : abstained && !answer.attachmentsRead ? 'abstention' : 'extractive',
          evidence: {
            embedder: found.evidence.embedderId,
            best_cosine: found.evidence.bestCosine,
            term_coverage: found.evidence.termCoverage,
            person_mismatch: found.evidence.personMismatch ?? null,
          },
        },
      },
    });
    yield {
      type: 'done',
      message_id: messageId,
      session_id: session.id,
      tokens_used: tokensUsed,
      citations_count: out.citations.length,
      duration_ms: durationMs,
      ...(freshness ? { freshness } : {}),
    };
  } catch (err) {
    if (req.signal?.aborted) return;
    // The error's text may quote a store address or SQL: the caller gets a fixed sentence and the request id.
    req.onError?.(err);
    yield {
      type: 'error',
      code: 'INTERNAL_ERROR',
      error: 'internal error: Atlas could not answer this question',
      ...(req.requestId ? { details: { request_id: req.requestId } } : {}),
    };
  }
}

/**
 * The answer's freshness mark (AskPorts.freshness): a channel ask marks its channel; an ask over every channel marks
 * its sources' channels and every channel of the caller's scope (`req.channels`, else all) still being read. Null
 * without a reader.
 */
const freshnessOf = async (ports: AskPorts, req: AskRequest, sources: readonly AskSource[]) => {
  if (!ports.freshness) return null;
  if (req.channelId) return ports.freshness.of({ channels: [req.channelId] });
  const drawn = [...new Set(sources.map((s) => s.fact.channel_id))];
  return ports.freshness.of({ channels: drawn, behindIn: req.channels ?? 'all' });
};

/**
 * The session an ask continues: a new one (fresh id, no messages) without `sessionId`; else that session's id and
 * earlier messages, or null when it does not exist in this scope (`channelId` null: the global scope) or is not
 * `owner`'s (undefined: anyone's).
 */
async function sessionOf(
  store: Pick<AskStore, 'context'>,
  sessionId: string | undefined,
  channelId: string | null,
  at: Date,
  owner: string | undefined,
): Promise<{ id: string; earlier: AskMessage[] } | null> {
  if (!sessionId) return { id: randomUUID(), earlier: [] };
  const ctx = await store.context(sessionId, { channelId: channelId ?? undefined, owner }, at);
  if (!ctx || ctx.channelId !== channelId) return null;
  return { id: sessionId, earlier: ctx.messages };
}

/** The text to retrieve for: a follow-up (FOLLOW_UP wording or under 5 words) carries the session's last question. */
const withPreviousQuestion = (question: string, earlier: readonly AskMessage[]): string => {
  const previous = [...earlier].reverse().find((m) => m.role === 'user')?.content;
  return previous && (FOLLOW_UP.test(question) || question.split(/\s+/).length < 5)
    ? `${question} ${previous}`
    : question;
};

/**
 * What an answer is made from: the route taken, the sources and their evidence (AskEvidence), or the cached wiki's
 * answer (then no sources); `searchQuery` is what was searched.
 */
export interface Found {
  route: AskRoute;
  sources: AskSource[];
  evidence: AskEvidence;
  searchQuery: string;
  wikiAnswer: string | null;
}

/**
 * Routes the question and retrieves its sources. `graph` / `both`: graph-expanded (the graph failing or slow →
 * semantic, spec degraded mode). Spec "Query fallbacks": vector store down → graph results beside the keyword
 * index's; vector and graph store both down → the cached wiki's answer; no cached wiki → null (the "temporarily
 * unavailable" error).
 */
export async function findSources(
  ports: AskPorts,
  question: string,
  searchQuery: string,
  req: Pick<AskRequest, 'channelId' | 'channels' | 'body' | 'signal'>,
): Promise<Found | null> {
  const { channelId, channels } = req;
  const limit = req.body.max_results;
  const routed: AskRoute = ports.graphRetrieval ? await routeOf(ports.llm.fast, question, req.signal) : 'semantic';
  let graphScores = routed === 'semantic' ? null : await graphScoresOf(ports.graphRetrieval, searchQuery, channelId);
  const route: AskRoute = graphScores ? routed : 'semantic';
  // The person check reads the question as asked (a name is not a content term the search query keeps).
  const checked = (e: AskEvidence, sources: AskSource[]): AskEvidence => ({
    ...e,
    personMismatch: personMismatch(question, sources),
  });
  const asOf = req.body.as_of;
  const first = await retrieve(ports, searchQuery, channelId, limit, graphScores, channels, asOf);
  if (!first.degraded.has('vector_store'))
    return {
      route,
      sources: first.sources,
      evidence: checked(first.evidence, first.sources),
      searchQuery,
      wikiAnswer: null,
    };
  let { sources, evidence } = first;
  if (!graphScores && routed === 'semantic') {
    graphScores = await graphScoresOf(ports.graphRetrieval, searchQuery, channelId);
    if (graphScores)
      ({ sources, evidence } = await retrieve(ports, searchQuery, channelId, limit, graphScores, channels, asOf));
  }
  if (graphScores) return { route, sources, evidence: checked(evidence, sources), searchQuery, wikiAnswer: null };
  // The cached wiki is today's: an answer as of an earlier date does not fall back to it.
  const wikiAnswer = asOf ? null : await cachedWikiAnswer(ports, question, channelId, channels);
  return wikiAnswer === null ? null : { route, sources: [], evidence, searchQuery, wikiAnswer };
}

/**
 * The channels (names) and facts an ask searched: `channelId`'s, else every channel's (only `visible` ones for a
 * restricted caller); fact counts as listChannels reports them.
 */
async function searchedScope(
  documents: AskPorts['documents'],
  query: string,
  channelId: string | null,
  visible: readonly string[] | undefined,
): Promise<SearchedScope> {
  const all = await documents.listChannels();
  const scope = all.filter((c) => (channelId === null || c.id === channelId) && (!visible || visible.includes(c.id)));
  return { query, channels: scope.map((c) => c.name), facts: scope.reduce((n, c) => n + c.fact_count, 0) };
}

/**
 * Streams the answer's text into `out`: the cached wiki's answer when there is one; else, when the ask abstains
 * (`abstention`: its text) and no file is attached, that text alone (the quality tier is not called: it would get
 * no source to answer from); else the quality tier's (failing before its first token → the extractive answer with
 * FALLBACK_NOTE; mid-stream → what was said, then the sources); else the extractive answer with EXTRACTIVE_NOTE
 * (abstaining with a file attached: the file's passage, then the abstention text instead of sources). Returns the
 * tokens used, whether the LLM streamed any text and whether attachments were part of the answer, or null when the
 * request was aborted while the LLM streamed.
 */
async function* answerText(
  quality: AskLlm | null,
  out: AnswerStream,
  found: Found,
  earlier: readonly AskMessage[],
  req: Pick<AskRequest, 'body' | 'attachments' | 'signal'>,
  abstention: string | null,
): AsyncGenerator<AskEvent, { tokensUsed: number; byLlm: boolean; attachmentsRead: boolean } | null> {
  const { body, attachments } = req;
  const { sources } = found;
  const texts = attachments.filter((a) => a.kind === 'text');
  const images = attachments.flatMap((a) => (a.kind === 'image' ? [a.name] : []));
  const attachmentsRead = attachments.length > 0;
  const nothing = abstention ?? undefined;
  if (found.wikiAnswer !== null) {
    yield* out.push(found.wikiAnswer);
    yield* out.flush();
    return { tokensUsed: estimateTokens(out.text), byLlm: false, attachmentsRead: false };
  }
  if (abstention !== null && !attachmentsRead) {
    yield* out.push(abstention);
    yield* out.flush();
    return { tokensUsed: estimateTokens(out.text), byLlm: false, attachmentsRead };
  }
  if (!quality) {
    yield* out.push(extractiveAnswer(body.question, sources, body.mode, texts, EXTRACTIVE_NOTE, images, nothing));
    yield* out.flush();
    return { tokensUsed: estimateTokens(out.text), byLlm: false, attachmentsRead };
  }
  const stream = quality.stream(promptOf(body, sources, earlier, attachments, quality.acceptsImages), {
    ...(req.signal ? { signal: req.signal } : {}),
  });
  let answered = false;
  try {
    for await (const delta of stream) {
      answered = true;
      yield* out.push(delta);
    }
    yield* out.flush();
    const usage = stream.usage();
    return {
      tokensUsed: usage ? usage.prompt_tokens + usage.completion_tokens : estimateTokens(out.text),
      byLlm: answered,
      attachmentsRead,
    };
  } catch {
    if (req.signal?.aborted) return null;
    yield* out.flush();
    if (answered) {
      // Mid-stream: what was said stands; the retrieved sources finish the answer.
      yield* out.push(
        `\n\n${INTERRUPTED_NOTE}\n\n${extractiveAnswer(body.question, sources, 'deep', texts, null, [], nothing)}`,
      );
    } else {
      yield* out.push(extractiveAnswer(body.question, sources, body.mode, texts, FALLBACK_NOTE, images, nothing));
    }
    yield* out.flush();
    return { tokensUsed: estimateTokens(out.text), byLlm: answered, attachmentsRead };
  }
}
