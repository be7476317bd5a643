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
/**
 * Openers only the memory text drops ("Yea, …", "Ugh …", "Nevermind, …", "I see, so …", "Or not, …"); stripOpeners
 * keeps them because the quality score measures the sentence after stripOpeners.
 */
const TEXT_OPENER = /^(?:(?:yea|ugh|meh|welp|nevermind|never mind)\b[\s,!.:;-]*|(?:i see|or not)[,!.:;]+\s*)/i;

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

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Not inside an identifier or a code symbol: `my-namespace`, `'my-ns`, `:my/key`, `my_var`, `our.core`. */
const NOT_CODE_BEFORE = String.raw`(?<![\w'’\-/.:_])`;
const NOT_CODE_AFTER = String.raw`(?![\w\-/_]|[.:]\w)`;
const ADVERB_RE = [...ADVERBS].join('|');

/**
 * One first-person word of prose, as one alternative each (named groups say which): `I'm`/`I've`/`I'll`/`I'd`,
 * `we're`/`we've`/`we'll`/`we'd`, my, me/myself, our/ours, we, and `I` with the verb after it (one adverb allowed).
 */
const FIRST_PERSON = new RegExp(
  [
    String.raw`(?<icon>(?<![\w.])[Ii](?:['’](?:m|ve|ll|d)|m)\b)`,
    String.raw`(?<wecon>\b[Ww]e['’](?:re|ve|ll|d)\b)`,
    String.raw`${NOT_CODE_BEFORE}\b(?<my>[Mm]y)\b${NOT_CODE_AFTER}`,
    String.raw`${NOT_CODE_BEFORE}\b(?<me>me|myself)\b${NOT_CODE_AFTER}`,
    String.raw`${NOT_CODE_BEFORE}\b(?<our>[Oo]urs?)\b${NOT_CODE_AFTER}`,
    String.raw`${NOT_CODE_BEFORE}\b(?<we>[Ww]e)\b${NOT_CODE_AFTER}`,
    String.raw`(?<i>(?<![\w.])[Ii](?![\w’'/]|\.\w))(?:(?<s1>\s+)(?<adv>(?:${ADVERB_RE})\s+)?(?<verb>[\w'’]+))?`,
  ].join('|'),
  'g',
);

/** The verb after "they" for the verb that followed "I": am → are, was → were, wasn't → weren't; others as written. */
const theyForm = (verb: string): string =>
  ({ am: 'are', was: 'were', "wasn't": "weren't", 'wasn’t': 'weren’t', wasnt: "weren't" })[verb.toLowerCase()] ?? verb;

const CONTRACTION_FULL: Record<string, string> = { m: 'is', ve: 'has', ll: 'will', d: 'would' };
const WE_FULL: Record<string, string> = { re: 'are', ve: 'have', ll: 'will', d: 'would' };

/**
 * Rewrites first person so that the author is named once: the first `I`/`my`/`me` becomes the author (`I'll upgrade`
 * → `Alice will upgrade`, `I think` → `Alice thinks`, `my` → `Alice's`), later ones become singular "they"
 * (`they`, `their`, `them`, `themselves`, `they're`); the first `we` becomes `Alice and team` (once nobody is named),
 * later ones `they`; `our` becomes `their` once someone is named or a first-person subject follows ("By sharing
 * our stories, we …"), else `Alice's` when it opens the text ("Our team …"), else `the` ("fixed in our new release" → "fixed in the new release"). "Named" means the author's name
 * already appears earlier in the text (so `Alice thinks I …` gives `Alice thinks they …`). Leaves code alone
 * (backtick spans, identifiers and symbols such as `(require 'my-namespace)`, `:my/key`, `my_var`) and quoted speech
 * ("…", “…”). Pure; returns the rewritten text.
 */
export const resolvePronouns = (s: string, author: string): string => {
  const authorRe = new RegExp(`(?<![\\w.-])${escapeRe(author)}(?![\\w-])`);
  const state = { out: '', team: false, authorRe };
  for (const [i, part] of s.split(/(`[^`]*`|"[^"\n]*"|“[^”\n]*”)/).entries()) {
    state.out += i % 2 === 1 ? part : resolveProse(part, author, state);
  }
  return state.out;
};

interface ResolveState {
  /** The text rewritten so far (earlier parts included). */
  out: string;
  /** A `we` has been rewritten already. */
  team: boolean;
  authorRe: RegExp;
}

const resolveProse = (s: string, author: string, state: ResolveState): string => {
  let out = '';
  let last = 0;
  for (const m of s.matchAll(FIRST_PERSON)) {
    out += s.slice(last, m.index);
    last = m.index + m[0].length;
    const before = state.out + out;
    const named = state.authorRe.test(before);
    // "alice and team use both, but I think …": a later subject "I" is alice again, not "they"
    const namedAlone = state.authorRe.test(before.replaceAll(`${author} and team`, ''));
    const they = /(^|[.!?]\s+)$/.test(before) && before.trim() !== '' ? 'They' : 'they';
    const g = m.groups ?? {};
    if (g.icon) {
      const c = g.icon.slice(-1) === 'm' ? 'm' : g.icon.replace(/^[Ii]['’]?/, '');
      const apostrophe = g.icon.includes('’') ? '’' : "'";
      out += namedAlone ? `${they}${apostrophe}${c === 'm' ? 're' : c}` : `${author} ${CONTRACTION_FULL[c]}`;
    } else if (g.wecon) {
      const c = g.wecon.slice(3);
      const apostrophe = g.wecon.charAt(2);
      out += named || state.team ? `${they}${apostrophe}${c}` : `${author} and team ${WE_FULL[c]}`;
      state.team = true;
    } else if (g.my) out += named ? 'their' : `${author}'s`;
    else if (g.me) out += named ? (g.me === 'me' ? 'them' : 'themselves') : author;
    else if (g.our) {
      // "By sharing our stories, we can …": a subject still to come makes "their" clear; else "our release" → "the release"
      const subjectLater = /(?<![\w.])(?:[Ii]|[Ww]e)\b/.test(s.slice(last)) || state.authorRe.test(s.slice(last));
      const opensText = (state.out + out).trim() === '';
      out +=
        g.our.length === 4
          ? 'theirs'
          : named || state.team || subjectLater
            ? 'their'
            : opensText
              ? `${author}'s` // "Our team fixed it" → "Bob's team fixed it"
              : 'the';
    } else if (g.we) {
      out += named || state.team ? they : `${author} and team`;
      state.team = true;
    } else if (g.i) {
      // "can I use …" (a question's word order): the verb after "I" stays in its base form
      const inverted =
        /\b(?:can|could|should|would|will|do|did|may|might|must|shall)\s+$/i.test(before) &&
        !/^(?:am|was)$/i.test(g.verb ?? '');
      const verb = g.verb && (namedAlone ? theyForm(g.verb) : inverted ? g.verb : thirdPerson(g.verb));
      out += `${namedAlone ? they : author}${g.verb ? `${g.s1}${g.adv ?? ''}${verb}` : ''}`;
    }
  }
  return out + s.slice(last);
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
export const ELIDED_SELF = new RegExp(
  [
    String.raw`^(?:(?:just|finally|also|recently|still)\s+)?(?:been|started|got|went|had|made|took|tried|finished|joined|bought|visited|spent|gonna|going to|planning|thinking|working|hoping|loving|trying)\b`,
    String.raw`^(?:(?:so|really|just)\s+)?(?:can'?t wait (?:for|to|until)|looking forward to|excited (?:for|about|to))\b`,
    String.raw`^(?:researching|volunteering|reading|painting|writing|learning|practicing|practising|studying|training|saving|building)\s+\w+(?!.*\b(?:is|are)\b)`,
  ].join('|'),
  'i',
);

/**
 * Where the rewrite puts the author back as subject: ELIDED_SELF, plus a past verb after an adverb ("Just added a
 * node server"), a few past verbs with an object ("Built something …") and `Will <verb>` ("Will try it out soon").
 * Wider than ELIDED_SELF, which the quality score reads, so that scores do not change with the rewrite.
 */
const ELIDED_SUBJECT = new RegExp(
  [
    ELIDED_SELF.source,
    // "Just added a node server", "Finally released v2": an adverb makes any of these the speaker's own doing
    String.raw`^(?:just|finally|also|recently)\s+(?:added|built|wrote|created|fixed|released|published|pushed|learned|learnt|discovered|found|noticed|realized|realised|moved|switched|upgraded|updated|installed|opened|checked|ported|rewrote|replaced|tested|merged|deployed)\b`,
    // "Built something …", "Found a workaround": without an adverb only with an object ("Fixed in 1.2" is a changelog line)
    String.raw`^(?:built|wrote|created|learned|learnt|discovered|noticed|realized|realised|found)\s+(?:a|an|the|some|something|my|our|this|that|it|out|how)\b`,
    String.raw`^will\s+(?:try|check|look|do|fix|add|update|release|test|send|share|post|write|have|make|ping|get|see|push|publish|merge|give|keep|report|open|file)\b`,
  ].join('|'),
  'i',
);

/** "…like taylor I guess, but …", "…, I think.": a hedge in passing, dropped (a leading "I think" stays: Alice thinks …). */
const PARENTHETICAL_HEDGE = /(?:,\s*|\s+)I (?:guess|think|suppose|believe|reckon)(?=\s*(?:[,.;!?…]|$))/g;

/**
 * Puts the author back as the subject of a sentence that dropped its "I" (ELIDED_SELF): "Just started aerial yoga" →
 * "Alice just started aerial yoga", "Been busy volunteering" → "Alice has been busy volunteering", "Looking forward to
 * the trip" → "Alice is looking forward to the trip", "Can't wait for the opening" → "Alice can't wait for the opening".
 */
const restoreSubject = (body: string, author: string): string => {
  if (!ELIDED_SUBJECT.test(body)) return body;
  const m = body.match(/^((?:(?:just|finally|also|recently|still|so|really)\s+)*)(\S+)/i);
  if (!m) return body;
  const adverbs = m[1]!.toLowerCase();
  const verb = m[2]!.charAt(0).toLowerCase() + m[2]!.slice(1);
  const aux = /^been$/i.test(verb) ? 'has ' : /(ing|^gonna|^excited)$/i.test(verb) ? 'is ' : '';
  return `${author} ${aux}${adverbs}${verb}${body.slice(m[0].length)}`;
};

/** A shared file described in brackets, as importers write captions and alt texts: `[image: a photo of a lake]`. */
export const MEDIA_CAPTION = /^\[(image|photo|picture|video|file|attachment):\s*(.+?)\]$/i;

/**
 * Builds an atomic, self-contained memory_text: openers stripped, the author named once (resolvePronouns),
 * questions as `Alice asked: "…"`, requests as `Alice asked Bob to …`, unattributed opinions as
 * `Alice thinks …`, and short or anaphoric replies suffixed with the thread root they answer. At most
 * MEMORY_TEXT_MAX characters.
 */
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
  const stripped = stripOpeners(sentence, mentions);
  const addressees = stripped.addressees;
  const rest = stripped.text.replace(TEXT_OPENER, '');
  const text = rest.length >= 3 && rest !== stripped.text ? stripOpeners(rest, mentions).text : stripped.text;
  let body = text
    .replace(/\s*:\s*$/, '.')
    .replace(/^\((.*)\)([.!]?)$/, '$1$2')
    .replace(PARENTHETICAL_HEDGE, '');
  if (cls.type === 'question') body = `${author} asked: "${body.replace(/\s+$/, '')}"`;
  else if (cls.type === 'action_item' && cls.owner !== 'self' && cls.owner) {
    const m = body.match(
      /^(?:please|pls|can you|could you|would you(?: mind)?|can someone|could someone|someone should)\s+(?:please\s+)?(.*?)\??$/i,
    );
    const to = addressees[0] ?? cls.owner;
    const who = to === 'someone' ? 'someone' : `@${to}`;
    body = resolvePronouns(m?.[1] ? `${author} asked ${who} to ${m[1]}` : body, author);
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
