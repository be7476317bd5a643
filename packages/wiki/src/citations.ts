/**
 * Wiki citations (spec "Wiki": "Wiki citation: id (string of the form `[<n>]`), author, channel,
 * timestamp, text_excerpt, permalink, media_type (string or null), media_name (string or null)").
 *
 * A citation's excerpt is a span of the SOURCE MESSAGE text (markup rendered readably), never the
 * rewritten fact, so a reader can check it against the message. verifyCitation is the check the
 * renderer applies before showing a claim: a claim whose citation does not verify is dropped.
 */
import type { SourceMessage, WikiCitation, WikiFact } from './types.js';

/** Options shared by citationFor and verifyCitation: user (and role) ids to display names, for mentions. */
export interface CitationOptions {
  userNames?: ReadonlyMap<string, string>;
}

/** Maximum excerpt length in characters, not counting the `…` cut marks. */
export const EXCERPT_MAX_CHARS = 200;

const ELLIPSIS = '…';

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/**
 * Renders platform markup readably, keeping line breaks (spec platforms `platform_a`, workplace chat, and
 * `platform_b`, community chat):
 * `<@U123|bob>` → `@bob`; `<@U123>` / `<@!123>` → `@name` (from userNames) or `@U123`; `<@&123>` → `@role`
 * name or `@123`; `<#C1|general>` → `#general`; `<#C1>` → `#C1`; `<!here>` → `@here`;
 * `<!subteam^S1|@team>` → `@team`; `<!date^…|fallback>` → `fallback`; `<http://x|label>` → `label`;
 * `<http://x>` → `http://x`; `<mailto:a@b|a@b>` → `a@b`; `<:emoji:1>` / `<a:emoji:1>` → `:emoji:`;
 * `<t:1700000000:R>` → ISO date; HTML entities (`&amp;`, `&lt;`, `&gt;`) decoded; backticks removed.
 */
export function renderMarkup(text: string, opts: CitationOptions = {}): string {
  const names = opts.userNames;
  const out = text.replace(/<([^<>\s][^<>]*)>/g, (whole, inner: string) => {
    const [target = '', label] = splitLabel(inner);
    if (target.startsWith('@')) {
      if (label) return `@${label.replace(/^@/, '')}`;
      const id = target.replace(/^@[!&]?/, '');
      return `@${names?.get(id) ?? id}`;
    }
    if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
    if (target.startsWith('!')) {
      if (label) return label.startsWith('@') || target.startsWith('!date') ? label : `@${label}`;
      return `@${target.slice(1).split('^')[0]}`;
    }
    const emoji = /^a?:([\w~+-]+):\d+$/.exec(inner);
    if (emoji) return `:${emoji[1]}:`;
    const time = /^t:(-?\d+)(?::[a-zA-Z])?$/.exec(inner);
    if (time) return new Date(Number(time[1]) * 1000).toISOString();
    if (/^(https?|mailto|ftp|tel|slack):/i.test(target)) return label ?? target.replace(/^mailto:/i, '');
    return whole;
  });
  return out.replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e).replace(/`+/g, '');
}

function splitLabel(inner: string): [string, string | undefined] {
  const bar = inner.indexOf('|');
  return bar < 0 ? [inner, undefined] : [inner.slice(0, bar), inner.slice(bar + 1)];
}

const collapse = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The message text as verifyCitation compares it: markup rendered (renderMarkup), whitespace collapsed. */
export function normalizeMessageText(text: string, opts: CitationOptions = {}): string {
  return collapse(renderMarkup(text, opts));
}

/** Segments of a message: lines, then sentences; each whitespace-collapsed; joined by ' ' they give the normalised text. */
function segments(text: string, opts: CitationOptions): string[] {
  return renderMarkup(text, opts)
    .split(/\n+/)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=\S)/))
    .map(collapse)
    .filter((s) => s.length > 0);
}

const STOPWORDS = new Set(
  'the and for are but not you your with this that have has had was were will would can could should from they them their there what when where which who why how also just into about than then its our out all any been being some such very more most only over other same use using used does did doing get got one two may might must shall let lets please thanks thank hello team yeah yes'.split(
    ' ',
  ),
);

/** Content-word tokens (lower case, ≥ 3 characters, no stopwords, light suffix stripping). */
export function contentTokens(text: string): Set<string> {
  const out = new Set<string>();
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? []) {
    if (raw.length < 3 || STOPWORDS.has(raw)) continue;
    out.add(stem(raw));
  }
  return out;
}

function stem(w: string): string {
  if (w.length > 5 && w.endsWith('ing')) return w.slice(0, -3);
  if (w.length > 4 && w.endsWith('ed')) return w.slice(0, -2);
  if (w.length > 4 && w.endsWith('es')) return w.slice(0, -2);
  if (w.length > 3 && w.endsWith('s') && !w.endsWith('ss')) return w.slice(0, -1);
  return w;
}

interface Candidate {
  text: string;
  cutStart: boolean;
  cutEnd: boolean;
}

function score(candidate: string, factTokens: Set<string>): { overlap: number; value: number } {
  const tokens = contentTokens(candidate);
  let overlap = 0;
  for (const t of factTokens) if (tokens.has(t)) overlap++;
  const recall = overlap / Math.max(1, factTokens.size);
  const precision = overlap / Math.max(1, tokens.size);
  return { overlap, value: recall + 0.15 * precision - candidate.length / 100_000 };
}

/** The best word window (≤ max characters) of one long segment. */
function bestWindow(segment: string, factTokens: Set<string>, max: number): Candidate {
  const words = segment.split(' ');
  let best: Candidate = { text: '', cutStart: false, cutEnd: true };
  let bestValue = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < words.length; i++) {
    let text = '';
    let j = i;
    while (j < words.length && (text ? text.length + 1 : 0) + words[j]!.length <= max) {
      text = text ? `${text} ${words[j]}` : words[j]!;
      j++;
    }
    if (!text) text = words[i]!.slice(0, max);
    const { value } = score(text, factTokens);
    if (value > bestValue) {
      bestValue = value;
      best = { text, cutStart: i > 0, cutEnd: j < words.length };
    }
    if (j >= words.length) break;
  }
  return best;
}

/**
 * The span of `message` that best supports `fact` (spec "Wiki" citation text_excerpt): one to three
 * consecutive sentences or lines of the rendered message text, at most EXCERPT_MAX_CHARS characters
 * (a longer sentence is cut to its best word window, the cut marked `…`), chosen by overlap of content
 * words with the fact text. null when the message has no text or no span shares a content word with the fact.
 */
export function bestExcerpt(
  fact: Pick<WikiFact, 'memory_text'>,
  message: Pick<SourceMessage, 'text'>,
  opts: CitationOptions = {},
): string | null {
  const segs = segments(message.text ?? '', opts);
  if (segs.length === 0) return null;
  const factTokens = contentTokens(fact.memory_text);
  const candidates: Candidate[] = [];
  for (let i = 0; i < segs.length; i++) {
    let text = '';
    for (let j = i; j < Math.min(segs.length, i + 3); j++) {
      const next = text ? `${text} ${segs[j]}` : segs[j]!;
      if (next.length > EXCERPT_MAX_CHARS) {
        if (j === i) candidates.push(bestWindow(segs[i]!, factTokens, EXCERPT_MAX_CHARS));
        break;
      }
      text = next;
      candidates.push({ text, cutStart: false, cutEnd: false });
    }
  }
  let best: Candidate | null = null;
  let bestValue = Number.NEGATIVE_INFINITY;
  for (const c of candidates) {
    const { overlap, value } = score(c.text, factTokens);
    if (overlap === 0 || !c.text) continue;
    if (value > bestValue) {
      bestValue = value;
      best = c;
    }
  }
  if (!best) return null;
  return `${best.cutStart ? ELLIPSIS : ''}${best.text}${best.cutEnd ? ELLIPSIS : ''}`;
}

/**
 * The spec "Wiki" citation `[n]` for `fact`, pointing at its source `message` (author, channel name,
 * timestamp, permalink and first attachment from the message; text_excerpt from bestExcerpt over the
 * message text). null when the fact cannot be cited: the message is not the fact's source
 * (source_message_id differs from message.id) or no span of the message supports the fact.
 */
export function citationFor(
  n: number,
  fact: WikiFact,
  message: SourceMessage,
  opts: CitationOptions = {},
  /** bestExcerpt(fact, message, opts) when already known (a cache of an earlier run); computed otherwise. */
  knownExcerpt?: string | null,
): WikiCitation | null {
  if (fact.source_message_id !== message.id) return null;
  const excerpt = knownExcerpt === undefined ? bestExcerpt(fact, message, opts) : knownExcerpt;
  if (!excerpt) return null;
  const media = message.attachments?.[0];
  return {
    id: `[${n}]`,
    author: message.author,
    channel: message.channel_name,
    timestamp: message.timestamp,
    text_excerpt: excerpt,
    permalink: message.permalink,
    media_type: media?.media_type ?? null,
    media_name: media?.name ?? null,
  };
}

/**
 * True only when `citation` faithfully points at `message`: author, channel name, permalink and
 * timestamp (same instant) match, and the excerpt (leading/trailing `…` cut marks removed, whitespace
 * collapsed, or additionally markup-rendered) is non-empty and occurs in the message text normalised by
 * normalizeMessageText. A forged or paraphrased excerpt fails.
 */
export function verifyCitation(citation: WikiCitation, message: SourceMessage, opts: CitationOptions = {}): boolean {
  if (!citation || !message) return false;
  if (citation.author !== message.author || citation.permalink !== message.permalink) return false;
  if (citation.channel !== message.channel_name) return false;
  const a = Date.parse(citation.timestamp);
  if (!Number.isFinite(a) || a !== Date.parse(message.timestamp)) return false;
  if (!/^\[\d+\]$/.test(citation.id)) return false;
  const core = collapse(citation.text_excerpt ?? '')
    .replace(/^…\s*/, '')
    .replace(/\s*…$/, '');
  if (!core) return false;
  const haystack = normalizeMessageText(message.text ?? '', opts);
  return haystack.includes(core) || haystack.includes(normalizeMessageText(core, opts));
}
