// Community events (personal and community conversation: parades, classes, races…): Meetings without a programme.
import { GENERIC_NOUNS, lexTag, STOPWORDS, wordSet } from '../../facts/lexicon.js';
import { CODE_WORDS } from './projects.js';
import type { MeetingSpan } from './spans.js';
import { technologyName } from './technologies.js';
import { DAY_RE, MONTHS } from './text.js';

/** Event nouns that are never programming words: a Meeting after a determiner, a modifier or a participation verb. */
const SAFE_EVENTS: Record<string, string> = {
  parade: 'parade',
  festival: 'festival',
  fest: 'festival',
  concert: 'concert',
  exhibition: 'exhibition',
  marathon: 'marathon',
  fundraiser: 'fundraiser',
  rally: 'rally',
  retreat: 'retreat',
  ceremony: 'ceremony',
  competition: 'competition',
  comp: 'competition',
  recital: 'recital',
  gala: 'gala',
};
/**
 * Event nouns that are also programming or everyday words (a Java class, a REPL session, a race condition, a web
 * service, a round trip): a Meeting only with a lower-case, non-technical modifier right before ("pottery class") or
 * governed by a participation verb ("signed up for a class", "ran a race").
 */
const AMBIGUOUS_EVENTS: Record<string, string> = {
  class: 'class',
  course: 'course',
  program: 'program',
  programme: 'program',
  session: 'session',
  party: 'party',
  show: 'show',
  race: 'race',
  trip: 'trip',
  camp: 'camp',
  service: 'service',
  march: 'march',
  event: 'event',
  fair: 'fair',
  workshop: 'workshop',
  conference: 'conference',
  meetup: 'meetup',
  meeting: 'meeting',
  talk: 'talk',
  speech: 'speech',
};
/** Modifiers that make a `service` a ceremony people attend (anything else is a software or business service). */
const SERVICE_CEREMONY = wordSet(
  'church memorial funeral worship sunday religious prayer wedding candlelight remembrance mass chapel easter christmas',
);
/** Kinds the technical finder already names: an event phrase only refines its bare generic name. */
export const TECH_KINDS = new Set(['workshop', 'conference', 'meetup', 'meeting']);
const EVENT_HEAD = new RegExp(
  `(?<![\\p{L}\\p{N}_./@-])(${[...Object.keys(SAFE_EVENTS), ...Object.keys(AMBIGUOUS_EVENTS), 'camping']
    .sort((a, b) => b.length - a.length)
    .join('|')})(e?s)?(?![\\p{L}\\p{N}_]|[-/.][\\p{L}\\p{N}])`,
  'giu',
);
/** Words that end an event's modifiers: evaluations, sizes, times, quantities. */
const NOT_MODIFIER = wordSet(
  'great awesome amazing fun big small little new old first last next recent local huge nice cool special whole real quick short long annual weekly daily monthly yearly regular wonderful beautiful lovely good bad best worst fantastic incredible favorite favourite fave fav upcoming latest same other different another own free online virtual huge entire actual certain such many much more most few several whole wild crazy super really very particular specific general broader wider larger global open strong solid supportive close tight amazing',
);
/** Modifiers of an ambiguous event noun that make it a programming word ("helper class", "REPL session"). */
export const TECH_MODIFIERS = wordSet(
  'main helper abstract base inner outer anonymous static data record test wrapper proxy sub super parent child utility util java web micro repl http https user browser login ring server client database db api rest interactive debug debugging build condition data-race round shell computer clojure small tiny simple type value style css component root top bottom deftype defrecord ui dom wire click mouse keyboard key change input async sync handleable custom video third thirt 3rd second',
);
/** Determiners and possessives before an event or group phrase. */
export const DETERMINER =
  /(?:^|\s)(a|an|the|this|that|these|those|my|your|his|her|our|their|its|some|another|every|each|one|[\p{Lu}][\p{L}]+['’]s)\s+$/u;
/** A verb that governs an event noun phrase: taking part, running, hosting ("went to a", "signed up for the"). */
export const EVENT_VERB =
  /(?:\b(?:went|go(?:es|ing)?|gone|headed|came|come|coming) (?:to|on)|\b(?:attend(?:s|ed|ing)?|join(?:s|ed|ing)?|visit(?:s|ed|ing)?|host(?:s|ed|ing)?|organi[sz](?:e|es|ed|ing)|(?:co-?)?led|lead(?:s|ing)?|ran|run(?:s|ning)?|took|take(?:s|n)?|taking|did|doing|had|having|held|hold(?:s|ing)?|threw|throw(?:s|ing)?|gave|give(?:s|n)?|giving|deliver(?:s|ed|ing)?|started|start(?:s|ing)?|finish(?:ed|es|ing)?|completed|enjoy(?:s|ed|ing)?|watched|saw|put(?:ting)? together|plan(?:s|ned|ning)?)|\b(?:took|take|taking|takes) part in|\bparticipat(?:e|es|ed|ing) in|\bsign(?:s|ed|ing)? up (?:for|to)|\benrol(?:l|ls|led|ling)? in|\bregister(?:ed)? for|\bvolunteer(?:s|ed|ing)? (?:at|for|with)|\bperform(?:s|ed|ing)? (?:at|in)|\bspoke at|\bspeak(?:s|ing)? at|\b(?:was|were|is|are|be|been) at|\bat|\btook (?:[\p{L}'’]+\s+){1,3}to)$/iu;

interface EventSpan extends MeetingSpan {
  /** True when a participation verb governs the phrase ("went to a pottery class"). */
  governed: boolean;
}

const modifierWord = (w: string): string | null => {
  const clean = w.replace(/\+$/, '');
  if (!/^[\p{L}][\p{L}\p{N}'’-]*$/u.test(clean) || /['’]s$/.test(clean)) return null;
  const lw = clean.toLowerCase();
  if (STOPWORDS.has(lw) || NOT_MODIFIER.has(lw) || GENERIC_NOUNS.has(lw) || MONTHS.includes(lw)) return null;
  if (/Adjective|Comparative|Superlative|Adverb|Pronoun|Determiner|Preposition|Conjunction/.test(lexTag(lw)))
    return null;
  if (new RegExp(`^${DAY_RE}$`).test(lw) || /^(yesterday|tonight|today|tomorrow|weekend|ago)$/.test(lw)) return null;
  if (/ed$/.test(lw) && !/^(?:red|bed|med|shared|guided|supervised|organized|organised)$/.test(lw)) return null;
  if (/ly$/.test(lw) && lw !== 'family') return null;
  if (/-(?:like|style|based|as|ish)$/.test(lw) || (lw.match(/-/g) ?? []).length >= 2) return null;
  // keep acronyms (LGBTQ) and proper nouns as written, lower-case the others
  return /^\p{Lu}{2,}$/u.test(clean) || /^\p{Lu}\p{Ll}+\p{Lu}/u.test(clean) ? clean : lw;
};

/** Up to `max` modifier words right before `at` in `text` (nearest last), and where they start. */
export const modifiersBefore = (text: string, at: number, max: number): { words: string[]; start: number } => {
  const words: string[] = [];
  let start = at;
  let rest = text.slice(0, at);
  while (words.length < max) {
    const m = rest.match(/([\p{L}][\p{L}\p{N}'’+-]*)\s+$/u);
    if (!m) break;
    const w = modifierWord(m[1]!);
    if (!w) break;
    words.unshift(w);
    start = m.index!;
    rest = rest.slice(0, m.index);
  }
  return { words, start };
};

/**
 * Events of community life a text names (spec "Graph entity": Meeting, "an event people take part in"): parades,
 * festivals, concerts, races, camping trips, classes, courses, programs, workshops, parties, talks at a place…
 * Named by the noun phrase with its modifiers, lower-cased, singular ("pride parade", "pottery class", "charity
 * race", "mentorship program", "LGBTQ support group meeting"); "went camping" is a `camping trip`, "a talk at a
 * school" a `talk at school`. Ambiguous nouns (class, session, race, service…) need a non-technical modifier or a
 * participation verb; a bare noun needs a determiner ("the parade"), never a sentence start or a verb use.
 */
export const findEvents = (text: string): EventSpan[] => {
  const out: EventSpan[] = [];
  for (const m of text.matchAll(EVENT_HEAD)) {
    const written = m[1]!;
    const lower = written.toLowerCase();
    const start = m.index;
    let end = start + m[0].length;
    if (lower === 'march' && written !== 'march') continue; // the month
    const before = text.slice(0, start);
    if (lower === 'camping') {
      // "went camping", "took the kids camping", "camping trip" (the trip is the head), "go camping"
      const next = text.slice(end).match(/^\s+(trips?)\b/i);
      if (next) continue; // the `trip` match names it
      if (
        !/\b(?:go|goes|going|went|gone|been|took|take|takes|taking|love|loves|enjoy|enjoys|enjoyed|fam|family|kids|us|them)\s+$/i.test(
          before,
        )
      )
        continue;
      out.push({ name: 'camping trip', index: start, end, kind: 'trip', named: false, governed: true });
      continue;
    }
    const head = SAFE_EVENTS[lower] ?? AMBIGUOUS_EVENTS[lower] ?? '';
    if (!head) continue;
    const ambiguous = lower in AMBIGUOUS_EVENTS;
    const mods = modifiersBefore(text, start, 3);
    // "race condition", "class loader", "show me", "talk to": a noun followed by a noun or a preposition it takes
    const next =
      text
        .slice(end)
        .match(/^\s+([\p{L}][\p{L}'-]*)/u)?.[1]
        ?.toLowerCase() ?? '';
    if (
      ambiguous &&
      /^(condition|conditions|loader|loaders|path|name|names|method|methods|file|files|var|vars|id|ids|key|keys|store|storage|state|token|cookie|object|instance|instances|hierarchy|registry|discovery|mesh|account|layer|worker|workers|me|you|him|her|them|us|it|that|this|how|amount|bit|share|number|enough|point|list|lists|names)$/.test(
        next,
      ) &&
      !/^(talk|speech)$/.test(head)
    )
      continue;
    if (
      ambiguous &&
      mods.words.length === 0 &&
      /^(?:up|off|to|with|through|about)$/.test(next) &&
      !/^(talk|speech)$/.test(head)
    )
      continue;
    const det = before.slice(0, mods.start);
    const detM = det.match(DETERMINER);
    const hasDet = detM !== null;
    const beforeDet = detM ? det.slice(0, det.length - detM[0].length) : det;
    const verbText = beforeDet.slice(-48).replace(/\s+$/, '');
    const governed = EVENT_VERB.test(verbText.split(/[.;!?,:]/).at(-1) ?? '') && /\b\S+$/.test(verbText);
    const immediate = mods.words.at(-1) ?? '';
    let name = [...mods.words, head].join(' ');
    const index = mods.words.length > 0 ? mods.start : start;
    if (head === 'talk' || head === 'speech') {
      // "gave a talk at a school", "giving Caroline's talk": only given, never "talk to"
      const verb =
        /\b(?:gave|give|gives|giving|deliver(?:s|ed|ing)?|did|do|doing)\s*$/i.test(beforeDet) ||
        /\b(?:gave|give|giving)\s+$/i.test(det);
      if (!verb || !hasDet) continue;
      const at = text
        .slice(end)
        .match(
          /^\s+at\s+(?:(?:a|an|the|their|her|his|my|our|a local)\s+)?((?:[\p{L}][\p{L}'-]*\s+){0,2}?)(school|college|university|church|library|center|centre|conference|event|club|meetup|festival|parade|rally|company|office|museum|hospital|shelter)\b/iu,
        );
      if (at) {
        name = `${head} at ${at[2]!.toLowerCase()}`;
        end += at[0].length;
      }
      out.push({ name, index, end, kind: head, named: false, governed: true });
      continue;
    }
    if (ambiguous) {
      const techMod =
        immediate !== '' &&
        (TECH_MODIFIERS.has(immediate.toLowerCase()) ||
          technologyName(immediate) !== null ||
          /^\p{Lu}/u.test(immediate) ||
          CODE_WORDS.has(immediate.toLowerCase()));
      if (techMod) continue;
      // "billing service", "web service": a service is an event only as a ceremony ("memorial service")
      if (head === 'service' && !SERVICE_CEREMONY.has(immediate.toLowerCase())) continue;
      if ((head === 'camp' || head === 'fair') && !governed) continue;
      if (
        head === 'fair' &&
        next &&
        !/^(?:at|in|on|last|this|next|yesterday|today|with|and|to|for|was|is|where|that)$/.test(next)
      )
        continue;
      const nextWritten = text.slice(end).match(/^\s+([\p{L}][\p{L}\p{N}.+#-]*)/u)?.[1] ?? '';
      if (nextWritten && (technologyName(nextWritten) || /^\p{Lu}{2,}$/u.test(nextWritten))) continue;
      if (mods.words.length === 0 && !(governed && hasDet)) continue;
      if (mods.words.length > 0 && !hasDet && !governed && !/\b(?:in|at|from|after|before|during)\s+$/i.test(det)) {
        // "pottery class" without a determiner: only after a preposition ("made it in pottery class")
        continue;
      }
    } else if (mods.words.length === 0 && !hasDet && !/\b(?:in|at)\s+$/i.test(det)) continue;
    if (TECH_KINDS.has(head) && mods.words.length === 0) continue; // the technical finder names it
    out.push({ name, index, end, kind: head, named: false, governed });
  }
  return out;
};
