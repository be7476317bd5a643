// Projects (spec "Graph entity": Project).
import { normalizeEntityName } from '@atlas/core';
import { GENERIC_NOUNS, lexTag, STOPWORDS, wordSet } from '../../facts/lexicon.js';
import { OFFLINE_CONFIDENCE } from './confidence.js';
import type { Span } from './spans.js';
import { technologyName } from './technologies.js';
import { esc, MONTHS, subjectRe } from './text.js';

const NAME_TAIL = "[\\p{L}\\p{N}_+#'-]*(?:[./][\\p{L}\\p{N}_+#-]+)*";
const NAME = `[\\p{L}]${NAME_TAIL}`;
const NOT_PROJECT = wordSet(
  'im ive id ill dont cant wont didnt doesnt isnt thats whats youre theyre lets ok okay yes no hi hey thanks version release update library project tool app plugin framework fork',
);
/** Capitalised words of code talk (Java classes, placeholders) that are no project without a cue. */
export const CODE_WORDS = wordSet(
  'class object string map list set vector exception error logger foo bar baz qux quux protocol record type interface method function instance coffee thread system runtime integer long boolean array node atom ref agent var',
);
const NOUN_SUFFIX = /(tion|sion|ment|ness|ity|ance|ence|ible|able|ing|ism|ize|ise|ful|less|ous|ive)$/;
const CLASS_SUFFIX =
  /(Exception|Error|Class|Factory|Impl|Builder|Handler|Listener|Interface|Type|Key|Map|List|Set|Vector|String|Fn|Function|Object|Record|Protocol|Loader|Reader|Writer|Stream)$/;

/** Why a word cannot be a project name (null when it can): a stop word, a date, a technology, a class name… */
export const projectNameProblem = (name: string, strongCue: boolean): string | null => {
  const lower = name.toLowerCase();
  const words = lower.split(/\s+/);
  if (name.length < 2 || words.every((w) => STOPWORDS.has(w) || GENERIC_NOUNS.has(w) || NOT_PROJECT.has(w)))
    return 'common word';
  if (technologyName(name)) return 'technology';
  if (/-(like|style|based|compatible|specific|friendly|ish|esque|only|free|ready|aware|side|level|time)$/i.test(name))
    return 'adjective';
  if (name.split(/[/+&]/).every((p) => technologyName(p))) return 'technologies';
  if (/^[\p{Lu}\d]{6,}$/u.test(name) && /\d/.test(name)) return 'id';
  if (!strongCue && !name.includes(' ') && (NOUN_SUFFIX.test(lower) || (lower.length >= 7 && /(er|or)$/.test(lower))))
    return 'common noun';
  if (/^\d/.test(name) || /^v?\d+(\.\d+)+/.test(lower)) return 'number';
  if (words.some((w) => /Date|Month|WeekDay|Holiday/.test(lexTag(w)) || MONTHS.includes(w))) return 'date';
  if (/^\p{Lu}{2,}s?$/u.test(name)) return 'acronym';
  if (/^\p{Lu}[\p{Ll}]+\p{Lu}/u.test(name) && CLASS_SUFFIX.test(name)) return 'class name';
  if (/^I\p{Lu}\p{Ll}/u.test(name)) return 'interface name';
  if (!strongCue && CODE_WORDS.has(lower)) return 'code word';
  if (!strongCue && /^\p{Lu}\p{Ll}+s$/u.test(name) && !/(ss|us|is)$/.test(lower)) return 'plural noun';
  if (!strongCue && /^\p{Ll}+\p{Lu}/u.test(name)) return 'method name';
  if (/^\p{Lu}/u.test(name) || /[a-z][A-Z]/.test(name)) return null;
  // lowercase: a library-like name (`atom-parinfer`, `boot-tools-deps`, `owner/repo`) with a cue
  if (!strongCue) return 'lowercase';
  if (/[./]/.test(name) && /^[a-z][\w.-]*(\/[\w.-]+)?$/.test(name)) {
    const parts = lower.split(/[./]/);
    return parts.every((p) => STOPWORDS.has(p) || lexTag(p) !== '') ? 'common words' : null;
  }
  const parts = lower.split('-');
  if (parts.length >= 3 || (parts.length === 2 && parts.some((p) => lexTag(p) === '' && !STOPWORDS.has(p))))
    return null;
  return 'common word';
};

interface ProjectHit extends Span {
  confidence: number;
  /** WORKS_ON from the author: explicit (I maintain/wrote/released X, my project X), implied (a release note). */
  worksOn: 'explicit' | 'implied' | null;
  repo: string | null;
}

const cleanName = (s: string): string => s.replace(/['’]s$/, '').replace(/[.,;:!?'’)-]+$/, '');

/**
 * Projects a fact's text names by cue: repository URLs and paths, dependency coordinates, ownership
 * ("I'm working on / I maintain / I wrote / released X", "my library X"), nouns ("the X library", "X project")
 * and versions ("X 1.2", "X v0.5.0 is out"). Bare proper nouns are added by the caller from the entity tags.
 */
export const findProjects = (text: string, author: string): ProjectHit[] => {
  const out: ProjectHit[] = [];
  const S = subjectRe(author);
  const add = (
    raw: string,
    index: number,
    confidence: number,
    worksOn: ProjectHit['worksOn'],
    strong: boolean,
    repo: string | null = null,
  ): void => {
    const name = cleanName(raw);
    if (projectNameProblem(name, strong)) return;
    out.push({ name, index, end: index + name.length, confidence, worksOn, repo });
  };
  for (const m of text.matchAll(
    /\bhttps?:\/\/(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)\/([\w.-]+)\/([\w.-]+)/gi,
  )) {
    const repoName = m[2]!.replace(/\.+$/, '').replace(/\.git$/, '');
    if (/^(orgs|users|topics|settings|features|marketplace|about)$/i.test(m[1]!)) continue;
    const tech = technologyName(repoName);
    if (!tech) add(repoName, m.index, OFFLINE_CONFIDENCE.projectRepo, null, true, `${m[1]}/${repoName}`);
  }
  for (const m of text.matchAll(/\[([\w.-]+)\/([\w.-]+) "[^"]+"\]|(?<![\w/.])([\w.-]+)\/([\w.-]+) \{:mvn\/version/g)) {
    const group = m[1] ?? m[3]!;
    const artifact = (m[2] ?? m[4]!).replace(/\.+$/, '');
    if (!technologyName(artifact))
      add(artifact, m.index + 1 + group.length + 1, OFFLINE_CONFIDENCE.projectRepo, null, true, `${group}/${artifact}`);
  }
  const ownership = new RegExp(
    `\\b${S}\\s+(?:(?:is|am|are|'m|has|have|had|was|were|been|also|just|now|currently|still|finally|recently|actively)\\s+)*([Ww]orking on|[Ww]orks? on|[Mm]aintain(?:s|ing)?|[Ww]rote|[Ww]ritten|[Bb]uilt|[Cc]reated|[Aa]uthored|[Dd]evelop(?:s|ed|ing)?|[Rr]eleased|[Pp]ublished|[Ll]aunched|[Oo]pen[- ]sourced)\\s+(?:(?:a|an|the|my|our|their|${esc(author)}'s|new|first|little|small|simple|tiny|own)\\s+)*(?:(?:library|lib|project|tool|app|plugin|framework|wrapper|fork|port|service|site|website)\\s+)?(?:called\\s+|named\\s+)?(${NAME}(?:\\s+\\p{Lu}${NAME_TAIL})?)`,
    'gu',
  );
  for (const m of text.matchAll(ownership)) {
    if (/\b(?:if|when|whether|unless|once)\s+$/i.test(text.slice(Math.max(0, m.index - 10), m.index))) continue;
    const x = m[2]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectOwned, 'explicit', true);
  }
  const possessive = new RegExp(
    `(?:\\b${esc(author)}'s|\\b[Mm]y|\\b[Oo]ur)\\s+(?:(?:new|own|little|small|open[- ]source|side)\\s+)*(?:library|lib|project|tool|app|plugin|framework|fork|startup|company|product)\\s+(?:called\\s+|named\\s+)?(${NAME})`,
    'gu',
  );
  for (const m of text.matchAll(possessive)) {
    const x = m[1]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectOwned, 'explicit', true);
  }
  for (const m of text.matchAll(
    new RegExp(
      `\\b(?:the|a|an|this|that)\\s+(?:library|lib|project|tool|plugin|framework)\\s+(?:called\\s+|named\\s+)?(${NAME})`,
      'giu',
    ),
  )) {
    const x = m[1]!;
    add(x, m.index + m[0].length - x.length, OFFLINE_CONFIDENCE.projectCue, null, true);
  }
  for (const m of text.matchAll(
    new RegExp(`(?<![\\p{L}\\p{N}_./-])(${NAME})\\s+(?:library|lib|project|plugin|framework)\\b`, 'giu'),
  )) {
    add(m[1]!, m.index, OFFLINE_CONFIDENCE.projectCue, null, /[-./]/.test(m[1]!));
  }
  const version = new RegExp(
    `(?<![\\p{L}\\p{N}_./-])((?:\\p{Lu}[\\p{L}\\p{N}]*\\s+)?${NAME})\\s+v?\\d+\\.\\d+(?:\\.\\d+)*(?:[-.][\\w]+)*(\\s+(?:(?:is|was|has been|have been|just|now|finally)\\s+)*(?:released|out|published|available|shipped|landed))?`,
    'gu',
  );
  for (const m of text.matchAll(version)) {
    const released =
      m[2] !== undefined || /\b(released|publish(?:ed)?|announcing|shipped)\s+$/i.test(text.slice(0, m.index));
    let x = m[1]!;
    // "Keechma Toolbox 0.1.8": keep a capitalised first word unless it opens the text, is a stop word or the author.
    const two = x.split(/\s+/);
    if (two.length === 2 && (STOPWORDS.has(two[0]!.toLowerCase()) || two[0] === author)) x = two[1]!;
    const index = m.index + m[1]!.length - x.length;
    add(
      x,
      index,
      released ? OFFLINE_CONFIDENCE.projectCue + 0.05 : OFFLINE_CONFIDENCE.projectCue,
      released ? 'implied' : null,
      true,
    );
  }
  // keep the strongest hit of each name
  const best = new Map<string, ProjectHit>();
  for (const h of out) {
    const k = normalizeEntityName(h.name);
    const prev = best.get(k);
    const rank = (x: ProjectHit): number => (x.worksOn === 'explicit' ? 2 : x.worksOn === 'implied' ? 1 : 0);
    if (!prev || h.confidence > prev.confidence || rank(h) > rank(prev))
      best.set(k, {
        ...h,
        confidence: Math.max(h.confidence, prev?.confidence ?? 0),
        worksOn: prev && rank(prev) > rank(h) ? prev.worksOn : h.worksOn,
        repo: h.repo ?? prev?.repo ?? null,
      });
    else if (prev && !prev.repo && h.repo) prev.repo = h.repo;
  }
  return [...best.values()].sort((a, b) => a.index - b.index);
};
