// Search questions: the entities a question names, for graph-expanded retrieval.
import { type EntityType, normalizeEntityName } from '@atlas/core';
import { classify } from '../../facts/classify.js';
import { lexTag, STOPWORDS, TECH } from '../../facts/lexicon.js';
import { extractTags } from '../../facts/tags.js';
import type { KnownPerson } from '../port.js';
import { findMeetings } from './meetings.js';
import { buildIndex, coveredBy, detectNames, nameWords, resolvePerson } from './people.js';
import { findProjects, projectNameProblem } from './projects.js';
import { findTeams } from './teams.js';
import { findTech, technologyName } from './technologies.js';
import { findWord } from './text.js';

/**
 * The entities a search question names, for graph-expanded retrieval: people by name or alias (and `@handles`),
 * technologies (TECH lexicon), meetings, teams and projects (repository paths, cue phrases, proper nouns that are
 * no person, place or technology). Each name once per type, in order of appearance; `[]` when none.
 * Deterministic, except that `today`/`tomorrow` before a meeting kind resolve against the current date (UTC).
 */
export const questionEntities = (
  text: string,
  people: readonly KnownPerson[],
): { name: string; type: EntityType }[] => {
  const out: { name: string; type: EntityType; index: number }[] = [];
  const index = buildIndex(people);
  const push = (name: string, type: EntityType, at: number): void => {
    const k = normalizeEntityName(name);
    if (k && !out.some((o) => o.type === type && normalizeEntityName(o.name) === k))
      out.push({ name, type, index: at });
  };
  const explained: string[] = [];
  // people: n-grams of words against the known names and aliases
  const words = [...text.matchAll(/@?[\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}]|@?[\p{L}\p{N}]/gu)];
  for (let i = 0; i < words.length; i++) {
    for (let n = 3; n >= 1; n--) {
      if (i + n > words.length) continue;
      const spelled = text.slice(words[i]!.index, words[i + n - 1]!.index + words[i + n - 1]![0].length);
      const k = normalizeEntityName(spelled);
      if (STOPWORDS.has(k) || (technologyName(k) && !spelled.startsWith('@'))) continue;
      const p = resolvePerson(index, k);
      if (!p || (k.length < 3 && !spelled.startsWith('@'))) continue;
      push(p.name, 'Person', words[i]!.index);
      explained.push(spelled);
      i += n - 1;
      break;
    }
  }
  for (const m of text.matchAll(/(?<![\w.@])@([\p{L}\p{N}][\p{L}\p{N}._-]*[\p{L}\p{N}_])/gu)) {
    if (!coveredBy(m[1]!, explained)) {
      push(m[1]!, 'Person', m.index);
      explained.push(m[1]!);
    }
  }
  const tags = extractTags(text, [], classify(text), { author: '', mentions: [] }, '');
  for (const t of tags.entityTags) {
    const tech = technologyName(t);
    if (tech) {
      push(tech, 'Technology', Math.max(0, findTech(text, tech)?.index ?? 0));
      explained.push(t);
    }
  }
  // technologies the tag cap left out, and lowercase spellings in a question ("is lein faster than boot?")
  for (const w of words) {
    const t = TECH.get(w[0].toLowerCase());
    if (t && (!t.capitalOnly || /^\p{Lu}/u.test(w[0]))) {
      push(t.name, 'Technology', w.index);
      explained.push(w[0]);
    }
  }
  const ts = new Date().toISOString();
  for (const mt of findMeetings(text, ts)) {
    push(mt.name, 'Meeting', mt.index);
    explained.push(mt.name);
  }
  for (const t of findTeams(text)) {
    push(t.name, 'Team', t.index);
    explained.push(t.name);
  }
  for (const p of findProjects(text, '\u0000')) {
    if (!coveredBy(p.name, explained)) {
      push(p.name, 'Project', p.index);
      explained.push(p.name);
    }
  }
  for (const m of text.matchAll(/(?<![\w/.])([A-Za-z][\w.-]*\/[\w.-]*[A-Za-z0-9])(?![\w/])/g)) {
    if (/[a-z]/.test(m[1]!) && !coveredBy(m[1]!, explained) && m[1]!.split('/').every((x) => x.length >= 2)) {
      const repo = m[1]!.split('/')[1]!;
      if (!technologyName(repo) && !/^(and|or)$/i.test(repo)) push(repo, 'Project', m.index);
      explained.push(m[1]!);
    }
  }
  const names = detectNames(text, [...tags.entityTags, ...nameWords(text)]);
  for (const n of names.people) {
    if (/^\p{Lu}/u.test(n) && !technologyName(n) && !coveredBy(n, explained)) {
      push(n, 'Person', Math.max(0, findWord(text, n)));
      explained.push(n);
    }
  }
  const candidates = [...tags.entityTags];
  // a capitalised first word the lexicon does not know ("Expound: who wrote it?")
  const first = text.match(/^\s*(\p{Lu}[\p{L}\p{N}-]+)/u)?.[1];
  if (first && lexTag(first.toLowerCase()) === '' && !STOPWORDS.has(first.toLowerCase())) candidates.push(first);
  for (const t of candidates) {
    if (coveredBy(t, explained) || names.skip.has(normalizeEntityName(t))) continue;
    if (t.split(' ').some((w) => /Place|Country|City|Region|Organization/.test(lexTag(w.toLowerCase())))) continue;
    if (
      /^(What|Who|Whom|Whose|When|Where|Which|Why|How|Is|Are|Was|Were|Did|Does|Do|Can|Could|Should|Would|Will)$/.test(t)
    )
      continue;
    if (projectNameProblem(t, false)) continue;
    push(t, 'Project', Math.max(0, findWord(text, t)));
    explained.push(t);
  }
  return out.sort((a, b) => a.index - b.index).map(({ name, type }) => ({ name, type }));
};
