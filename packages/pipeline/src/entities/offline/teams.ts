// Teams (spec "Graph entity": Team).
import { GENERIC_NOUNS, STOPWORDS, wordSet } from '../../facts/lexicon.js';
import type { Span } from './spans.js';

const TEAM_SKIP = wordSet(
  'whole same other entire new old my our your their his her this that right wrong best first next last only home away opposing winning losing national a an every any some each',
);
const GROUP_MODIFIERS = wordSet(
  'user study working interest steering advisory reading program programme organizing organising core review technical',
);

/** Teams a text names: `the X team` and `team X` (as `X team`), `X squad`, `X committee`, `X user/study/working group`. */
export const findTeams = (text: string): Span[] => {
  const out: Span[] = [];
  for (const m of text.matchAll(
    /\b(?:the|our|their|my|your) ((?:[\p{L}\p{N}.+#-]+ ){0,2}[\p{L}\p{N}.+#-]+) team\b/giu,
  )) {
    const words = m[1]!.split(' ');
    while (words.length > 0 && TEAM_SKIP.has(words[0]!.toLowerCase())) words.shift();
    if (words.length === 0 || words.some((w) => STOPWORDS.has(w.toLowerCase()) || TEAM_SKIP.has(w.toLowerCase())))
      continue;
    const x = words.join(' ');
    const index = m.index + m[0].indexOf(x, m[0].indexOf(' '));
    out.push({ name: `${x} team`, index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(/(?<!\band )\bteam (\p{Lu}[\p{L}\p{N}.+-]*)/gu)) {
    if (STOPWORDS.has(m[1]!.toLowerCase())) continue;
    out.push({ name: `${m[1]} team`, index: m.index, end: m.index + m[0].length });
  }
  for (const m of text.matchAll(
    /\b((?:\p{Lu}[\p{L}\p{N}.+&-]*\s+){0,4})((?:[a-z][\w-]*\s+)?)(squad|committee|[Cc]ommittee|[Gg]roup|[Ss]quad)\b(?! of\b|-by|\()/gu,
  )) {
    let prefix = m[1]!.trim().split(/\s+/).filter(Boolean);
    while (prefix.length > 0 && /^(The|A|An|Our|Their|My|This)$/.test(prefix[0]!)) prefix = prefix.slice(1);
    const modifier = m[2]!.trim().toLowerCase();
    const kind = m[3]!;
    const ok =
      prefix.length > 0 ||
      GROUP_MODIFIERS.has(modifier) ||
      (/squad|committee/i.test(kind) && modifier !== '' && !TEAM_SKIP.has(modifier) && !GENERIC_NOUNS.has(modifier));
    if (!ok || (prefix.length > 0 && m.index === 0 && prefix.length === 1 && !modifier)) continue;
    if (
      /^(google|facebook|slack|telegram|whatsapp|discord|linkedin|yahoo|reddit|meetup|signal|wechat)$/i.test(
        prefix.at(-1) ?? '',
      )
    )
      continue;
    const name = [...prefix, m[2]!.trim(), kind].filter(Boolean).join(' ');
    const index = m.index + m[0].indexOf(prefix[0] ?? m[2]!.trim() ?? kind);
    out.push({ name, index, end: m.index + m[0].length });
  }
  return out.sort((a, b) => a.index - b.index);
};
