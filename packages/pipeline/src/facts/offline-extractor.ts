import { type Fact, factUuid, type MessageIngested, PLATFORM_A_SYSTEM_SUBTYPES } from '@atlas/core';
import { classify } from './classify.js';
import { stripEmoji } from './markup.js';
import type { ExtractionInput, FactExtractor, ThreadContext } from './port.js';
import { type Preprocessed, preprocess, summarizeThreadContext } from './preprocess.js';
import { buildMemoryText } from './rewrite.js';
import { importanceOf, qualityScore } from './score.js';
import { isNoise, mergeShort, type Sentence, splitSentences } from './sentences.js';
import { extractTags } from './tags.js';

/** At most this many facts per message (research notes: Beever Atlas's quality gate). */
export const MAX_FACTS_PER_MESSAGE = 2;

type Candidate = Omit<
  Fact,
  'factId' | 'authorId' | 'authorName' | 'messageTs' | 'threadTs' | 'permalink' | 'validAt' | 'threadContextSummary'
> & {
  index: number;
};

/**
 * The spec's "regex fast path" fact extractor ("LLM fallback chain"; port: FactExtractor). Pure and deterministic:
 * the same message and thread context always give the same facts and ids. Never throws on odd input; a message
 * with nothing factual (chit-chat, joins, emoji) gives []. Returns at most 2 candidates, scored in [0, 1];
 * the caller keeps those ≥ QUALITY_THRESHOLD (see selectFacts).
 */
export class OfflineFactExtractor implements FactExtractor {
  readonly id = 'offline-regex@1';

  async extract(input: ExtractionInput): Promise<Fact[]> {
    return this.extractSync(input);
  }

  /** Synchronous form of `extract`, for batch scripts and benchmarks. */
  extractSync({ message, thread, answers = null }: ExtractionInput): Fact[] {
    if (message.subtype && PLATFORM_A_SYSTEM_SUBTYPES.has(message.subtype)) return [];
    if (!message.text.trim()) return [];
    const pre = preprocess({ ...message, text: stripFileShare(message.text) });
    const sentences = mergeShort(splitSentences(pre.text, pre.inlineCode)).filter((s) => !isNoise(s.text));
    const isReply = thread !== null && thread.rootId !== message.platformMessageId;
    const asked = isReply || answers?.rootId === message.platformMessageId ? null : answers;
    const candidates = sentences.map((s) => this.candidate(s, message, pre, isReply ? thread : asked, asked !== null));
    const best = dedupe(candidates)
      .sort((a, b) => b.qualityScore - a.qualityScore || a.index - b.index)
      .slice(0, MAX_FACTS_PER_MESSAGE)
      .sort((a, b) => a.index - b.index);
    const common = {
      authorId: message.author.id,
      authorName: message.author.name,
      messageTs: message.timestamp,
      threadTs: message.threadTs,
      permalink: message.permalink,
      validAt: message.timestamp,
    };
    return best.map(({ index: _index, ...c }) => ({
      factId: factUuid(message.messageId, c.memoryText),
      ...c,
      ...common,
      threadContextSummary: summarizeThreadContext(thread, message),
    }));
  }

  /** `thread`: the root replied to, or the question answered (`answers` true); rewrites and scores read it. */
  private candidate(
    s: Sentence,
    message: MessageIngested,
    pre: Preprocessed,
    thread: ThreadContext | null,
    answers: boolean,
  ): Candidate {
    const cls = classify(s.text);
    const author = message.author.name;
    const topic = stripEmoji(message.channelName).replace(/^[#\s]+/, '');
    const tags = extractTags(s.text, pre.inlineCode, cls, { author, mentions: pre.mentions }, topic);
    const memoryText = buildMemoryText({
      sentence: s.text,
      cls,
      author,
      thread,
      isReply: thread !== null,
      mentions: pre.mentions,
    });
    const score = qualityScore({
      sentence: s.text,
      cls,
      specifics: tags.specifics,
      links: s.text.match(/https?:\/\//g)?.length ?? 0,
      hasCode: s.hasCode,
      codeShare: codeShare(s.text, pre.inlineCode),
      hasContext: memoryText.includes('(in reply to '),
      answers,
      isBot: message.author.isBot || message.subtype === 'bot_message',
      lang: pre.lang,
    });
    return {
      memoryText,
      factType: cls.type,
      importance: importanceOf(cls, score, s.text),
      qualityScore: score,
      topicTags: tags.topicTags,
      entityTags: tags.entityTags,
      actionTags: tags.actionTags,
      sourceLang: pre.lang,
      index: s.index,
    };
  }
}

/**
 * Slack's file-share boilerplate (`<@U1> uploaded a file: <url|title> and commented: …`, `<@U1> commented on
 * <@U2>'s file <url|title>: …`) carries no fact of its own: keep only the comment, or nothing.
 */
export const stripFileShare = (text: string): string => {
  const user = '<@[A-Z0-9]+(?:\\|[^>]*)?>';
  const upload = text.match(new RegExp(`^${user} uploaded a file: <[^>]+>(?: and commented: ([\\s\\S]*))?$`));
  if (upload) return upload[1] ?? '';
  const comment = text.match(new RegExp(`^${user} commented on ${user}['’]s file <[^>]+>: ([\\s\\S]*)$`));
  return comment ? (comment[1] ?? '') : text;
};

/** Share of `sentence` made of inline code, in [0, 1]. */
const codeShare = (sentence: string, inlineCode: readonly string[]): number => {
  let chars = 0;
  for (const code of inlineCode) if (sentence.includes(code)) chars += code.length;
  return sentence.length ? Math.min(1, chars / sentence.length) : 0;
};

const dedupe = (cs: readonly Candidate[]): Candidate[] => {
  const seen = new Set<string>();
  return cs.filter((c) => {
    const key = c.memoryText.toLowerCase().replace(/\s+/g, ' ');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
};
