import type { Classified } from './classify.js';
import { lexTag } from './lexicon.js';
import type { ThreadContext } from './port.js';
import { truncate } from './preprocess.js';

/** Longest memory_text, in characters (a longer sentence is cut at a word boundary). */
export const MEMORY_TEXT_MAX = 300;

const OPENER_WORDS =
  'hi|hey|hello|yo|gm|so|oh|ah|ahh|hmm+|hm+|also|btw|anyway|anyways|actually|and|but|fwiw|ps|lol|haha|doh|oops|nm|nvm|idk|tbh|imo|imho|yeah|yep|yup|ok|okay|alright|(?:thanks|thank you)(?: (?:so much|a lot))?(?: for (?:the|your) (?:info|help|answer|tip|reply|explanation)s?)?';
const OPENER_WITH_PUNCT =
  'well|yes|no|nope|nah|right|sure|cool|great|nice|indeed|correct|exactly|true|sorry|aha|fair enough';
const INTERJECTION = new RegExp(
  `^(?:[-–—*>•^]+\\s+|\\(?\\d{1,2}[.)]\\s+|(?:hi|hey|hello|thanks) (?:all|everyone|everybody|guys|folks|team|there|again)\\b[\\s,!.:;]*|(?:${OPENER_WORDS})(?:[\\s,!.:;]+|\\s+-+\\s+|$)|(?:${OPENER_WITH_PUNCT})(?:[,!.:;]+\\s*|\\s+-+\\s+|\\s+(?=(?:i|we|you|it|that|this|they)\\b)))`,
  'i',
);
const ADDRESSEE = /^@([\w.-]+)[,:]?\s+/;

/** The `@Name` (a known mention, possibly several words, else one word) that opens `text`, or null. */
const leadingMention = (text: string, mentions: readonly string[]): { name: string; length: number } | null => {
  for (const name of [...mentions].sort((a, b) => b.length - a.length)) {
    if (!text.startsWith(`@${name}`)) continue;
    if (!/^($|[\s,:])/.test(text.slice(name.length + 1))) return null; // `@Bob's repo`: a subject, not an addressee
    const rest = text.slice(name.length + 1).match(/^\s*[,:]?\s*/)?.[0] ?? '';
    return { name, length: name.length + 1 + rest.length };
  }
  const m = text.match(ADDRESSEE);
  return m ? { name: m[1] ?? '', length: m[0].length } : null;
};

/** Removes greetings, fillers and leading `@addressee`s; returns the rest and the addressees. */
export const stripOpeners = (s: string, mentions: readonly string[] = []): { text: string; addressees: string[] } => {
  let text = s.trim();
  const addressees: string[] = [];
  for (let i = 0; i < 6; i++) {
    const m = leadingMention(text, mentions);
    if (m) {
      addressees.push(m.name);
      text = text.slice(m.length);
      continue;
    }
    const next = text.replace(INTERJECTION, '');
    if (next === text || next.length < 3) break;
    text = next;
  }
  return { text: text.replace(/^[\s,;:.!-]+/, '').trim(), addressees };
};

const ADVERBS = new Set(
  'also just really actually still never always often usually recently only even already mostly sometimes now then personally generally'.split(
    ' ',
  ),
);
const FIXED: Record<string, string> = {
  am: 'is',
  have: 'has',
  do: 'does',
  "don't": "doesn't",
  'don’t': 'doesn’t',
  "haven't": "hasn't",
  'haven’t': 'hasn’t',
  "i'm": 'is',
  dont: "doesn't",
  havent: "hasn't",
  go: 'goes',
};

const KEEP_AFTER_I = new Set(
  "can could should would will might must may shall did didn't was wasn't had hadn't can't couldn't won't wouldn't shouldn't cannot".split(
    ' ',
  ),
);

/** Past forms the lexicon files under nouns (`dove`) or that equal the base form (`put`): never conjugated. */
const IRREGULAR_PAST = new Set(
  'dove saw found felt left read led fed bet cut put set hit let shut quit spread cast cost hurt thought'.split(' '),
);

/** Verbs the compromise lexicon files under nouns (`feel` is Singular there). */
const COMMON_VERBS = new Set(
  'feel guess hope need want like love hate use think mean agree doubt wonder prefer suspect see know get run work try plan wish care expect remember believe assume recommend suggest find look call write build'.split(
    ' ',
  ),
);

/**
 * Third-person singular of the verb that followed "I" (`think` → `thinks`, `try` → `tries`, `guess` → `guesses`).
 * Past tense, modals and words the lexicon does not know stay as they are (`dove`, `learnt`).
 */
export const thirdPerson = (word: string): string => {
  const lower = word.toLowerCase();
  if (FIXED[lower]) return FIXED[lower];
  const tag = lexTag(lower);
  const verb =
    COMMON_VERBS.has(lower) || (/Infinitive|PresentTense|Singular/.test(tag) && !/PastTense|Modal|Adverb/.test(tag));
  if (!verb || IRREGULAR_PAST.has(lower)) return word;
  if (KEEP_AFTER_I.has(lower.replace('’', "'"))) return word;
  if (/[^aeiou]y$/.test(lower)) return `${word.slice(0, -1)}ies`;
  if (/(s|sh|ch|x|z|o)$/.test(lower)) return `${word}es`;
  return `${word}s`;
};

/** Conjugates the verb after a new third-person subject, skipping one adverb (`I also think` → `also thinks`). */
const conjugate = (w1: string, s2: string | undefined, w2: string | undefined): string =>
  ADVERBS.has(w1.toLowerCase()) && w2 ? `${w1}${s2}${thirdPerson(w2)}` : `${thirdPerson(w1)}${s2 ?? ''}${w2 ?? ''}`;

/** Not inside an identifier or a code symbol: `my-namespace`, `'my-ns`, `:my/key`, `my_var`, `our.core`. */
const NOT_CODE_BEFORE = String.raw`(?<![\w'’\-/.:_])`;
const NOT_CODE_AFTER = String.raw`(?![\w\-/_]|[.:]\w)`;
const word = (w: string, flags = 'g') => new RegExp(`${NOT_CODE_BEFORE}\\b(?:${w})\\b${NOT_CODE_AFTER}`, flags);
const MY = word('[Mm]y');
const ME = word('me|myself');
const OUR = word('[Oo]ur');
const WE = word('[Ww]e');

/**
 * Rewrites first person to the author (`I'll upgrade` → `Alice will upgrade`, `I think` → `Alice thinks`,
 * `my` → `Alice's`, `we've` → `Alice and team have`). Leaves quoted or questioned text alone (the caller decides),
 * and code alone: backtick spans, and words that are part of an identifier or symbol (`(require 'my-namespace)`,
 * `:my/key`, `my_var`).
 */
export const resolvePronouns = (s: string, author: string): string =>
  s
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : resolveProse(part, author)))
    .join('');

const resolveProse = (s: string, author: string): string => {
  const team = `${author} and team`;
  return s
    .replace(/\b[Ii]['’]?m\b/g, `${author} is`)
    .replace(/\b[Ii]['’]ve\b/g, `${author} has`)
    .replace(/\b[Ii]['’]ll\b/g, `${author} will`)
    .replace(/\b[Ii]['’]d\b/g, `${author} would`)
    .replace(
      /\b[Ww]e['’](re|ve|ll|d)\b/g,
      (_m, c: string) => `${team} ${{ re: 'are', ve: 'have', ll: 'will', d: 'would' }[c]}`,
    )
    .replace(MY, `${author}'s`)
    .replace(ME, author)
    .replace(OUR, 'their')
    .replace(WE, team)
    .replace(
      /(?<![\w.])[Ii](?![\w’']|\.\w)(\s+)([\w'’]+)(\s+)?([\w'’]+)?/g,
      (_m, s1: string, w1: string, s2?: string, w2?: string) => `${author}${s1}${conjugate(w1, s2, w2)}`,
    )
    .replace(/(?<![\w.])[Ii](?![\w’']|\.\w)/g, author);
};

const ANAPHORIC =
  /^(yes|yeah|yep|yup|no|nope|nah|sure|correct|right|exactly|indeed|that|this|it|they|those|these|use|try|just|you can|you could|you need|you should|same)\b/i;

/** Everything the memory text builder needs about one candidate. */
export interface RewriteInput {
  sentence: string;
  cls: Classified;
  author: string;
  thread: ThreadContext | null;
  /** True when the message is a reply (not the thread root). */
  isReply: boolean;
  /** Display names of the users mentioned in the message. */
  mentions: readonly string[];
}

/**
 * Chat drops the "I": "Been busy volunteering at the shelter.", "Just started aerial yoga.", "Can't wait for tomorrow's
 * grand opening!", "Researching adoption agencies." (an activity gerund not followed by is/are: "Reading books is fun" is a general statement).
 */
export const ELIDED_SELF =
  /^(?:(?:just|finally|also|recently|still)\s+)?(?:been|started|got|went|had|made|took|tried|finished|joined|bought|visited|spent|gonna|going to|planning|thinking|working|hoping|loving|trying)\b|^(?:(?:so|really|just)\s+)?(?:can'?t wait (?:for|to|until)|looking forward to|excited (?:for|about|to))\b|^(?:researching|volunteering|reading|painting|writing|learning|practicing|practising|studying|training|saving|building)\s+\w+(?!.*\b(?:is|are)\b)/i;

/**
 * Puts the author back as the subject of a sentence that dropped its "I" (ELIDED_SELF): "Just started aerial yoga" →
 * "Alice just started aerial yoga", "Been busy volunteering" → "Alice has been busy volunteering", "Looking forward to
 * the trip" → "Alice is looking forward to the trip", "Can't wait for the opening" → "Alice can't wait for the opening".
 */
const restoreSubject = (body: string, author: string): string => {
  if (!ELIDED_SELF.test(body)) return body;
  const m = body.match(/^((?:(?:just|finally|also|recently|still|so|really)\s+)*)(\S+)/i);
  if (!m) return body;
  const adverbs = m[1]!.toLowerCase();
  const verb = m[2]!.charAt(0).toLowerCase() + m[2]!.slice(1);
  const aux = /^been$/i.test(verb) ? 'has ' : /(ing|^gonna|^excited)$/i.test(verb) ? 'is ' : '';
  return `${author} ${aux}${adverbs}${verb}${body.slice(m[0].length)}`;
};

/**
 * Builds an atomic, self-contained memory_text: openers stripped, first person resolved to the author,
 * questions as `Alice asked: "…"`, requests as `Alice asked Bob to …`, unattributed opinions as
 * `Alice thinks …`, and short or anaphoric replies suffixed with the thread root they answer.
 */
/** A shared file described in brackets, as importers write captions and alt texts: `[image: a photo of a lake]`. */
export const MEDIA_CAPTION = /^\[(image|photo|picture|video|file|attachment):\s*(.+?)\]$/i;

export const buildMemoryText = ({ sentence, cls, author, thread, isReply, mentions }: RewriteInput): string => {
  const media = sentence.trim().match(MEDIA_CAPTION);
  if (media)
    return truncate(
      finish(
        `${author} shared ${/^[aeiou]/i.test(media[1]!) ? 'an' : 'a'} ${media[1]!.toLowerCase()}: ${media[2]}`,
        author,
      ),
      MEMORY_TEXT_MAX,
    );
  const anaphoric = ANAPHORIC.test(sentence.replace(ADDRESSEE, ''));
  const { text, addressees } = stripOpeners(sentence, mentions);
  let body = text.replace(/\s*:\s*$/, '.').replace(/^\((.*)\)([.!]?)$/, '$1$2');
  if (cls.type === 'question') body = `${author} asked: "${body.replace(/\s+$/, '')}"`;
  else if (cls.type === 'action_item' && cls.owner !== 'self' && cls.owner) {
    const m = body.match(
      /^(?:please|pls|can you|could you|would you(?: mind)?|can someone|could someone|someone should)\s+(?:please\s+)?(.*?)\??$/i,
    );
    const to = addressees[0] ?? cls.owner;
    const who = to === 'someone' ? 'someone' : `@${to}`;
    body = m?.[1] ? `${author} asked ${who} to ${resolvePronouns(m[1], author)}` : resolvePronouns(body, author);
  } else {
    const resolved = resolvePronouns(restoreSubject(body, author), author);
    const attributed = resolved.includes(author);
    body = cls.type === 'opinion' && !attributed ? `${author} thinks ${lcFirst(resolved)}` : resolved;
  }
  body = finish(body, author);
  const words = body.split(/\s+/).length;
  if (thread && isReply && (anaphoric || words < 9) && cls.type !== 'question') {
    body = `${body.replace(/[.!]$/, '')} (in reply to ${thread.rootAuthorName}: "${truncate(oneLine(thread.rootText), 90)}")`;
  }
  return truncate(body, MEMORY_TEXT_MAX);
};

const lcFirst = (s: string): string =>
  /^[A-Z][a-z]/.test(s) && !/^[A-Z][a-z]+[A-Z]/.test(s) ? s.charAt(0).toLowerCase() + s.slice(1) : s;
const oneLine = (s: string): string => s.replaceAll('[code]', ' ').replace(/\s+/g, ' ').trim();

/** Capitalises (unless it opens with the author's name), collapses spaces and ends a statement with a full stop. */
const finish = (s: string, author: string): string => {
  const t = s
    .replace(/\s+/g, ' ')
    .replace(/\s+([,.;:!?])(?=\s|$)/g, '$1')
    .trim();
  const codeLike = /^\S*([-./:_\d]|[a-z][A-Z])/.test(t.split(' ')[0] ?? '');
  const cap = t.startsWith(author) || codeLike ? t : t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?…"')\]]$/.test(cap) ? cap : `${cap}.`;
};
