import { AsOf, type Freshness, type FreshnessPort } from '@atlas/core';
import type { AskCitation, AskStore, DocumentStore, MemoryDetailView } from '@atlas/stores';
import { z } from 'zod';
import type { GraphExpansion, SearchPorts } from '../search.js';
import type { AskRoute } from './router.js';

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
  /**
   * Answer as of this instant (issue 27 point 2): retrieval reads only facts stated at or before it, with their
   * validity then; the cached wiki (today's) is not a fallback. ISO 8601; a future one is now.
   */
  as_of: AsOf.optional(),
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
      /** Atlas's addition (docs/ask.md "Freshness", issue 27 point 3): how current the answer is; absent without a reader. */
      freshness?: Freshness;
    }
  | {
      type: 'error';
      error: string;
      code?: 'RATE_LIMIT_EXCEEDED' | 'INVALID_REQUEST' | 'INTERNAL_ERROR';
      retry_after?: number;
      /** Atlas's addition (docs/http.md "Errors"): on INTERNAL_ERROR, the request id its log lines carry. */
      details?: { request_id: string };
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
  /** The source messages of the facts (citations) and the channels (names, the cached wiki's scope). */
  documents: Pick<DocumentStore, 'getMessagesIn' | 'listChannels'>;
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
  /**
   * Freshness marks (issue 27 point 3): the done event carries the mark of the channels the answer drew on (the asked
   * channel, else its sources' channels and every channel of the caller's scope still being read). Absent: no mark.
   */
  freshness?: FreshnessPort | null;
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
  /**
   * The channels a restricted caller sees (docs/access.md "What a caller sees"): retrieval, citations and the cached
   * wiki's answer read only these. Undefined: every channel.
   */
  channels?: readonly string[] | undefined;
  attachments: AskAttachment[];
  /** Who asks (AskScope.owner: a key id or `bridge:<platform>:<user>`); undefined: the open local default or the bootstrap key. */
  owner?: string | undefined;
  signal?: AbortSignal;
  /** The HTTP request's id: an INTERNAL_ERROR event carries it (details.request_id) instead of the error's text. */
  requestId?: string;
  /** Called with an unexpected failure before its INTERNAL_ERROR event (the route logs it under the request id). */
  onError?: (err: unknown) => void;
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
