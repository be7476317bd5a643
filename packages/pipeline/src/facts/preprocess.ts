import type { MessageIngested } from '@atlas/core';
import { detectLang } from './lang.js';
import { CODE_PLACEHOLDER, renderMarkup } from './markup.js';
import type { ThreadContext } from './port.js';

/**
 * A message after the spec's Preprocess stage ("Ingestion pipeline").
 * - text: clean text, one line per source line; fenced code is replaced by `[code]`, inline code keeps its text.
 * - links: URLs in order of appearance (deduplicated); codeBlocks/inlineCode: code bodies, entities decoded.
 * - mentions: display names of mentioned users (Slack ids resolved through `message.mentions`).
 * - isQuestion: some line ends with `?` or the text opens with an interrogative.
 * - wordCount: words of `text` (a CJK character counts as one word); lang: see detectLang.
 */
export interface Preprocessed {
  text: string;
  links: string[];
  codeBlocks: string[];
  inlineCode: string[];
  mentions: string[];
  isQuestion: boolean;
  wordCount: number;
  lang: string;
}

const INTERROGATIVE =
  /^(who|what|when|where|why|which|how|is|are|am|was|were|does|do|did|can|could|should|would|will|has|have|anyone|anybody|any)\b/i;

/** Counts words; each Han/kana/Hangul character counts as one word (those scripts do not use spaces). */
export const countWords = (text: string): number => {
  const cjk = text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu)?.length ?? 0;
  const words = text.replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu, ' ');
  return cjk + (words.match(/[\p{L}\p{N}][\p{L}\p{N}'’._/-]*/gu)?.length ?? 0);
};

/**
 * Turns a platform message into clean text (spec "Ingestion pipeline": Preprocess; pure, never throws).
 * Slack: `<@U1>`/`<@U1|ann>` → `@Name`, `<#C1|dev>` → `#dev`, `<url|label>` → `label (url)` (or the URL when the
 * label is the URL), `<!here>` → `@here`, entities decoded, `*b*`/`_i_`/`~s~` stripped.
 * Discord: `**b**`, `__u__`, `||spoiler||` stripped, `<:emoji:id>` dropped, `<@123>` → `@Name`.
 * Both: `:emoji_codes:` and pictographic emoji removed; fenced code → `[code]`.
 */
export const preprocess = (message: MessageIngested): Preprocessed => {
  const rendered = renderMarkup(message.text, message.mentions);
  const r = { ...rendered, text: rendered.text.normalize('NFKC') };
  const prose = r.text.replaceAll(CODE_PLACEHOLDER, ' ');
  const isQuestion = /\?\s*$/m.test(prose) || INTERROGATIVE.test(prose.trim());
  return { ...r, isQuestion, wordCount: countWords(prose), lang: detectLang(prose) };
};

/** Cuts `s` to at most `max` characters at a word boundary, adding `…` when it cut. */
export const truncate = (s: string, max: number): string => {
  if (s.length <= max) return s;
  const cut = s.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > max * 0.6 ? cut.slice(0, space) : cut).replace(/[\s,;:.-]+$/, '')}…`;
};

/** Maximum length of a thread_context_summary, in characters. */
export const THREAD_SUMMARY_MAX = 160;

/**
 * The spec's `thread_context_summary` ("Memory" detail form): `Reply to Alice: "How do we deploy …"`,
 * at most 160 characters. Empty for a top-level message, a thread root, or an unknown root (`ctx` null).
 */
export const summarizeThreadContext = (ctx: ThreadContext | null, message: MessageIngested): string => {
  if (!ctx || ctx.rootId === message.platformMessageId) return '';
  const root = ctx.rootText.replaceAll(CODE_PLACEHOLDER, ' ').replace(/\s+/g, ' ').trim();
  const head = `Reply to ${ctx.rootAuthorName}`;
  if (!root) return truncate(head, THREAD_SUMMARY_MAX);
  const room = THREAD_SUMMARY_MAX - head.length - 4;
  if (room < 10) return truncate(head, THREAD_SUMMARY_MAX);
  return `${head}: "${truncate(root, room)}"`;
};
