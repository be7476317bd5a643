// Technologies: the TECH lexicon of the fact extractor, by normalised name and by spelling.
import { normalizeEntityName } from '@atlas/core';
import { TECH } from '../../facts/lexicon.js';
import { findWord } from './text.js';

const TECH_BY_NORM = new Map<string, string>();
const TECH_SPELLINGS = new Map<string, string[]>();
for (const [raw, t] of TECH) {
  TECH_BY_NORM.set(normalizeEntityName(t.name), t.name);
  TECH_SPELLINGS.set(t.name, [...(TECH_SPELLINGS.get(t.name) ?? []), raw]);
}

/** The TECH lexicon's display name of a technology tag or spelling (`lein` → `Leiningen`), else null. */
export const technologyName = (s: string): string | null =>
  TECH_BY_NORM.get(normalizeEntityName(s)) ?? TECH.get(s.toLowerCase())?.name ?? null;

/** Where a technology is written in `text` and the spelling used (`lein` for Leiningen). */
export const findTech = (text: string, name: string): { index: number; spelling: string } | null => {
  let best: { index: number; spelling: string } | null = null;
  for (const raw of [name, ...(TECH_SPELLINGS.get(name) ?? [])]) {
    const i = findWord(text, raw);
    if (i >= 0 && (best === null || i < best.index)) best = { index: i, spelling: text.slice(i, i + raw.length) };
  }
  return best;
};
