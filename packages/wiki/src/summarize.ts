/**
 * Optional LLM-written summaries of topic pages. renderChannelWiki writes an extractive summary (the
 * page's first key facts); when a chat model is configured, summarizeTopicPages asks it for a 1–3
 * sentence summary of each topic page built from that page's own cited key facts, and replaces the
 * extractive summary with it.
 *
 * Citation rule (spec "Wiki"): a claim that cannot be cited is left out, never shown uncited. The model's
 * answer passes through citedSummary, which keeps only sentences citing the page's own markers; when no
 * sentence survives, or the model call fails, the extractive page is kept as it is.
 */
import { AtlasError } from '@atlas/core';
import OpenAI from 'openai';
import { citationMarkers, renumberCitations } from './page-text.js';
import type { WikiPage } from './types.js';

/** One key fact of a topic page as the summarizer sees it. */
export interface TopicKeyFact {
  /** The page's citation marker of the fact, e.g. `[3]`. */
  marker: string;
  /** The bullet text as written on the page (Markdown; literal brackets escaped as `\[` `\]`). */
  text: string;
  /** Author of the cited source message. */
  author: string;
  /** Date of the cited source message, YYYY-MM-DD (UTC). */
  date: string;
}

/** What a summarizer gets for one topic page. */
export interface TopicSummaryInput {
  /** Channel name, without `#`. */
  channel: string;
  /** The page title. */
  title: string;
  /** The page's key facts, in page order. */
  keyFacts: TopicKeyFact[];
}

/** Writes the summary of one topic page. */
export interface WikiSummarizer {
  /** Name of the model writing the summaries (for provenance / logs). */
  readonly model: string;
  /**
   * The summary of a topic: 1–3 plain-text sentences that cite the key facts only by their markers
   * (`[n]`, as given in `input.keyFacts`), each sentence ending with the marker(s) of the facts it rests on.
   * The text is untrusted: callers pass it through citedSummary before showing it.
   * Errors: AtlasError PROVIDER_UNAVAILABLE (retriable) when the model cannot be reached, times out or
   * returns no text.
   */
  summarize(input: TopicSummaryInput): Promise<string | SummaryAnswer>;
}

/** A summary with what writing it cost: USD estimated from the tokens the model reported (0 for an unpriced model). */
export interface SummaryAnswer {
  text: string;
  costUsd: number;
}

/** USD of one call from its model and token counts (e.g. @atlas/stores estimateLlmCostUsd). */
export type LlmPrice = (model: string, promptTokens: number, completionTokens: number) => number;

/** Options of openAiSummarizer. */
export interface OpenAiSummarizerOptions {
  /** Base URL of any OpenAI-compatible API (OpenAI, Ollama, vLLM, …), e.g. `http://127.0.0.1:11434/v1`. */
  baseURL: string;
  /** API key; local servers usually need none (`none` is sent). */
  apiKey?: string | undefined;
  /** Chat model name. */
  model: string;
  /** Per-request timeout, ms (the request is not retried). */
  timeoutMs: number;
  /** Prices a call from the usage the endpoint reports; given, summarize answers {text, costUsd}. */
  price?: LlmPrice | undefined;
}

const SYSTEM_PROMPT = `You summarise one topic of a team chat channel for the members of that channel.
Write a summary of 1 to 3 sentences, using only the numbered facts you are given.
End every sentence with the marker(s) of the facts it rests on, exactly as given, e.g. "... [2]." or "... [1][3]."
Do not state anything that is not in the listed facts. Do not invent markers.
Answer in plain text only: no heading, no list, no Markdown, no introduction.`;

/** The user message: channel, topic and the numbered facts, one per line. */
function userPrompt(input: TopicSummaryInput): string {
  const facts = input.keyFacts.map((f) => `${f.marker} (${f.author}, ${f.date}) ${f.text}`);
  return [`Channel: #${input.channel}`, `Topic: ${input.title}`, '', 'Facts:', ...facts].join('\n');
}

/**
 * A WikiSummarizer over any OpenAI-compatible chat completions endpoint (the `openai` package): one
 * non-streaming completion per topic (temperature 0, no retry, `opts.timeoutMs` per request), a short
 * system prompt asking for 1–3 sentences citing the numbered facts by marker, and the facts as
 * `[n] (author, YYYY-MM-DD) text` lines in the user message.
 *
 * Errors (from summarize): AtlasError PROVIDER_UNAVAILABLE, retriable, on a network failure, a timeout,
 * any error status of the endpoint (`details.status` when known) or an empty answer.
 */
export function openAiSummarizer(opts: OpenAiSummarizerOptions): WikiSummarizer {
  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey ?? 'none',
    timeout: opts.timeoutMs,
    maxRetries: 0,
  });
  const unavailable = (why: string, err?: unknown, status?: number) =>
    new AtlasError('PROVIDER_UNAVAILABLE', `wiki summary endpoint ${opts.baseURL} unavailable: ${why}`, {
      retriable: true,
      cause: err,
      details: status === undefined ? { model: opts.model } : { model: opts.model, status },
    });
  return {
    model: opts.model,
    async summarize(input: TopicSummaryInput): Promise<string | SummaryAnswer> {
      let content: string | null | undefined;
      let costUsd = 0;
      try {
        const res = await client.chat.completions.create({
          model: opts.model,
          temperature: 0,
          messages: [
            { role: 'system', content: SYSTEM_PROMPT },
            { role: 'user', content: userPrompt(input) },
          ],
        });
        content = res.choices[0]?.message?.content;
        if (opts.price && res.usage)
          costUsd = opts.price(res.model || opts.model, res.usage.prompt_tokens, res.usage.completion_tokens);
      } catch (err) {
        const status = err instanceof OpenAI.APIError ? err.status : undefined;
        throw unavailable(err instanceof Error ? err.message : String(err), err, status);
      }
      const text = content?.trim();
      if (!text) throw unavailable('empty answer');
      return opts.price ? { text, costUsd } : text;
    },
  };
}

/**
 * A WikiSummarizer over any chat completion function (e.g. the quality tier's LLM chain, spec "LLM fallback chain":
 * primary → secondary provider, each behind its circuit breaker): sends the same prompt as openAiSummarizer and
 * returns the trimmed text. `complete` failing (every provider down) or an empty answer → AtlasError
 * PROVIDER_UNAVAILABLE, so the generator keeps the extractive summary (the wiki tier's last resort).
 */
export function completionSummarizer(
  model: string,
  complete: (
    messages: { role: 'system' | 'user'; content: string }[],
  ) => Promise<string | { text: string; costUsd?: number }>,
): WikiSummarizer {
  return {
    model,
    async summarize(input: TopicSummaryInput): Promise<string | SummaryAnswer> {
      let text: string | undefined;
      let costUsd: number | undefined;
      try {
        const answer = await complete([
          { role: 'system', content: SYSTEM_PROMPT },
          { role: 'user', content: userPrompt(input) },
        ]);
        text = (typeof answer === 'string' ? answer : answer.text).trim();
        costUsd = typeof answer === 'string' ? undefined : answer.costUsd;
      } catch (err) {
        throw new AtlasError('PROVIDER_UNAVAILABLE', `wiki summary model ${model} unavailable: ${String(err)}`, {
          retriable: true,
          cause: err,
          details: { model },
        });
      }
      if (!text)
        throw new AtlasError('PROVIDER_UNAVAILABLE', `wiki summary model ${model} gave an empty answer`, {
          retriable: true,
          details: { model },
        });
      return costUsd === undefined ? text : { text, costUsd };
    },
  };
}

/** Markers `[n]` (a backslash-escaped `\[` is literal text), as render.ts reads them. */
const MARKER = /(?<!\\)\[(\d+)\]/g;

/** Words whose trailing period does not end a sentence (lower case, without the final period). */
const ABBREVIATIONS = new Set([
  'e.g',
  'i.e',
  'etc',
  'vs',
  'cf',
  'approx',
  'incl',
  'esp',
  'resp',
  'no',
  'nr',
  'fig',
  'mr',
  'mrs',
  'ms',
  'dr',
  'prof',
  'st',
  'jr',
  'sr',
  'inc',
  'ltd',
  'co',
]);

/**
 * Candidate sentence ends: terminal punctuation, optional closing quotes / parentheses, then optional
 * markers, followed by whitespace or the end. A dot followed by a non-space (`1.9.0`, `e.g.,`) never ends one.
 */
const SENTENCE_END = /[.!?]+["'”’)]*((?:\s*(?<!\\)\[\d+\])*)(?=\s|$)/g;

/** Splits one block of prose into sentences (see SENTENCE_END; abbreviations and initials don't end one). */
function splitSentences(block: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const m of block.matchAll(SENTENCE_END)) {
    const end = m.index + m[0].length;
    const markers = m[1] ?? '';
    if (!markers && m[0].startsWith('.') && end < block.length) {
      // The word before the dot: an abbreviation ("e.g.") or a single initial ("J.") does not end a sentence.
      const word = /(\S+)$/.exec(block.slice(start, m.index))?.[1]?.replace(/^[("'“‘]+/, '') ?? '';
      if (ABBREVIATIONS.has(word.toLowerCase()) || /^\p{L}$/u.test(word)) continue;
    }
    out.push(block.slice(start, end));
    start = end;
  }
  out.push(block.slice(start));
  return out.map((s) => s.trim()).filter((s) => s.length > 0);
}

/** Prose blocks of a model answer: headings dropped, list bullets stripped (each item its own block). */
function blocks(text: string): string[] {
  const out: string[] = [];
  let cur: string[] = [];
  const flush = () => {
    if (cur.length) out.push(cur.join(' '));
    cur = [];
  };
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    const line = raw.trim();
    if (!line || /^#{1,6}(\s|$)/.test(line) || /^([-*_=]\s*){3,}$/.test(line)) {
      flush(); // blank line, heading (not a sentence) or rule
      continue;
    }
    const item = /^(?:[-*+•]|\d+[.)])\s+(.*)$/.exec(line);
    if (item) {
      flush();
      cur.push(item[1]!);
      continue;
    }
    cur.push(line);
  }
  flush();
  return out;
}

/**
 * The citable part of a model-written summary (spec "Wiki" citation rule: a claim that cannot be cited is
 * left out, never shown uncited). `text` is split into sentences (not at `e.g.`, `i.e.`, `etc.`, initials or
 * inside version numbers such as `1.9.0`; a marker after the final period belongs to its sentence); a
 * sentence is kept when it carries at least one `[n]` marker, every marker it carries is in `allowedMarkers`
 * (strings like `[3]`), and it has words besides its markers. Markdown headings and rules are dropped, list
 * bullets and `**` emphasis stripped, whitespace collapsed to single spaces.
 *
 * Returns the kept sentences in order joined by one space (one line), or null when none survives. Pure.
 */
export function citedSummary(text: string, allowedMarkers: ReadonlySet<string>): string | null {
  const kept: string[] = [];
  for (const block of blocks(text.replace(/\*\*/g, ''))) {
    for (const raw of splitSentences(block)) {
      const s = raw.replace(/\s+/g, ' ').trim();
      const markers = [...s.matchAll(MARKER)].map((m) => m[0]);
      if (!markers.length || !markers.every((m) => allowedMarkers.has(m))) continue;
      if (!/[\p{L}\p{N}]/u.test(s.replace(MARKER, ''))) continue;
      kept.push(s);
    }
  }
  return kept.length ? kept.join(' ') : null;
}

/**
 * A copy of `page` (a topic or sub-topic page as renderChannelWiki renders it: `# Title`, a blank line,
 * the summary paragraph, a blank line, …) whose `summary` is `summary` and whose summary paragraph in
 * `content` is replaced by it; every other line of `content`, and `citations`, stay as they are.
 * `summary` is one line (whitespace is collapsed) whose markers must all be ids of `page.citations`
 * (citedSummary guarantees it). The page is returned unchanged (same object) when its content does not hold
 * `page.summary` as the paragraph right after its title line, or when `summary` is empty or cites a marker the
 * page does not list. Note that markers keep their numbers: the summary may cite them out of order.
 */
export function withSummary(page: WikiPage, summary: string): WikiPage {
  const next = summary.replace(/\s+/g, ' ').trim();
  const ids = new Set(page.citations.map((c) => c.id));
  if (!next || !citationMarkers(next).every((m) => ids.has(m))) return page;
  const titleEnd = page.content.indexOf('\n');
  if (titleEnd < 0 || !page.content.startsWith('# ')) return page;
  const head = page.content.slice(0, titleEnd);
  const rest = page.content.slice(titleEnd);
  const old = `\n\n${page.summary}\n`;
  if (!rest.startsWith(old)) return page;
  return { ...page, summary: next, content: `${head}\n\n${next}\n${rest.slice(old.length)}` };
}

/** A key-fact bullet: `- text [n]` (one or more markers at the end of the line). */
const KEY_FACT = /^- (.*?)\s*((?:(?<!\\)\[\d+\]\s*)+)$/;

/** The key facts of a topic page: the cited bullets under `## Key facts`, with author and date from `citations`. */
function pageKeyFacts(page: WikiPage): TopicKeyFact[] {
  const byId = new Map(page.citations.map((c) => [c.id, c]));
  const out: TopicKeyFact[] = [];
  let inKeyFacts = false;
  for (const line of page.content.split('\n')) {
    if (/^#{1,6}\s/.test(line)) {
      inKeyFacts = /^##\s+Key facts\s*$/i.test(line);
      continue;
    }
    if (!inKeyFacts) continue;
    const m = KEY_FACT.exec(line);
    if (!m) continue;
    const markers = citationMarkers(m[2]!);
    const c = byId.get(markers[0]!);
    if (!c || !markers.every((id) => byId.has(id))) continue;
    out.push({ marker: markers.join(''), text: m[1]!, author: c.author, date: c.timestamp.slice(0, 10) });
  }
  return out;
}

/** Result of summarizeTopicPages. */
export interface SummarizeResult {
  /** All input pages in input order; summarized topic pages replaced by their new copy. */
  pages: WikiPage[];
  /** Topic / sub-topic pages whose summary was replaced. */
  summarized: number;
  /** Pages whose summarizer call threw (extractive summary kept). */
  failed: number;
  /** Pages whose answer had no citable sentence, or whose summary paragraph withSummary could not find (extractive summary kept). */
  dropped: number;
  /** USD of every answered call (summarized or dropped), as the summarizer priced them (0 when it gives no cost). */
  costUsd: number;
}

/**
 * Replaces the extractive summary of every topic and sub-topic page that has key facts by a model-written
 * one. For each such page: TopicSummaryInput from the page's own `## Key facts` bullets (marker(s) at the
 * end of the line; author and YYYY-MM-DD date from the page citation of the first marker), one
 * `summarizer.summarize` call, citedSummary with the page's citation ids as allowed markers, then
 * withSummary. At most `opts.concurrency` calls (default 2, at least 1) run at once.
 *
 * A call that throws keeps the page as it was and counts in `failed`; an answer with no citable sentence
 * keeps it and counts in `dropped` (so does a page withSummary leaves unchanged). Fixed pages and topic pages without a key fact pass through untouched
 * (no call). Page order is preserved. Never throws for a summarizer failure; resolves when every call has
 * settled.
 */
export async function summarizeTopicPages(
  pages: readonly WikiPage[],
  summarizer: WikiSummarizer,
  opts: { channel: string; concurrency?: number },
): Promise<SummarizeResult> {
  const out = [...pages];
  const result = { summarized: 0, failed: 0, dropped: 0, costUsd: 0 };
  const jobs: { index: number; page: WikiPage; input: TopicSummaryInput }[] = [];
  for (const [index, page] of pages.entries()) {
    if (page.page_type !== 'topic' && page.page_type !== 'sub-topic') continue;
    const keyFacts = pageKeyFacts(page);
    if (keyFacts.length) jobs.push({ index, page, input: { channel: opts.channel, title: page.title, keyFacts } });
  }
  const run = async (job: (typeof jobs)[number]) => {
    let answer: string;
    try {
      const got = await summarizer.summarize(job.input);
      answer = typeof got === 'string' ? got : got.text;
      if (typeof got !== 'string' && Number.isFinite(got.costUsd)) result.costUsd += Math.max(0, got.costUsd);
    } catch {
      result.failed++;
      return;
    }
    const text = citedSummary(answer, new Set(job.page.citations.map((c) => c.id)));
    const next = text === null ? job.page : withSummary(job.page, text);
    if (next === job.page) {
      result.dropped++;
      return;
    }
    // Markers stay numbered by first use (the summary may cite [3] before [1]).
    out[job.index] = renumberCitations(next);
    result.summarized++;
  };
  let nextJob = 0;
  const worker = async () => {
    while (nextJob < jobs.length) await run(jobs[nextJob++]!);
  };
  const width = Math.max(1, Math.floor(opts.concurrency ?? 2));
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
  return { pages: out, ...result };
}
