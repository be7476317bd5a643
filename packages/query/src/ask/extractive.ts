import { factText } from '@atlas/wiki';
import type { AskAttachment, AskBody, AskSource } from './types.js';
import { dayText, whenOf } from './when.js';

/** A source is part of an extractive answer when its score is at least this share of the best source's. */
const RELATIVE_FLOOR = 0.6;

/** "7 May 2023" (UTC): the date form the answers use. */
export const answerDate = (iso: string): string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso.slice(0, 10) : dayText(d);
};

/**
 * The extractive answer (no LLM, or the LLM unavailable): the sources scoring at least 60% of the best, as cited
 * lines "<fact> (<author>, <date>) [n]" (a question starting with "when": "<when>: <fact> (<author>) [n]", the
 * fact's own time resolved against its message's date, whenOf). `quick`: the best source, and up to two more within
 * 90% of it; `deep`: every
 * such source, one per line; `summarize`: grouped by their first topic tag. Text from attachments leads when given.
 * `note` (when not null) ends the answer, saying it is extractive; `unreadImages` (names) are said to be unread. No
 * source: `nothing` (the engine's abstention text, abstain.ts), by default a sentence saying nothing was found.
 */
export function extractiveAnswer(
  question: string,
  sources: readonly AskSource[],
  mode: AskBody['mode'],
  attachments: readonly Extract<AskAttachment, { kind: 'text' }>[],
  note: string | null,
  unreadImages: readonly string[] = [],
  nothing = 'I found nothing in the knowledge base about that.',
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
  if (chosen.length === 0) parts.push(nothing);
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
