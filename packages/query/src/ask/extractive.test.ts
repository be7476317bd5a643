import { describe, expect, it } from 'vitest';
import { escapeMarkers, extractiveAnswer } from './extractive.js';
import { EXTRACTIVE_NOTE } from './notes.js';
import { askSource } from './sources.test-support.js';
import type { AskSource } from './types.js';

const source = (n: number, text: string, score: number): AskSource => askSource(n, text, { score });

describe('extractiveAnswer', () => {
  it("writes a fact's own [n] as \\[n\\], so the only [n] in an answer are citation markers", () => {
    const sources = [
      source(1, 'Use (get xs [2]) or (nth xs 0) [1] for the first item.', 1),
      source(2, 'nth is O(n) on lists.', 0.9),
    ];
    for (const mode of ['quick', 'deep', 'summarize'] as const) {
      const text = extractiveAnswer('how do I get the first item?', sources, mode, [], EXTRACTIVE_NOTE);
      expect(text).toContain('(get xs \\[2\\])');
      expect(text).toContain('(nth xs 0) \\[1\\]');
      expect(new Set(text.match(/\[\d+\]/g))).toEqual(new Set(['[1]', '[2]']));
      expect(text.endsWith(`_${EXTRACTIVE_NOTE}_`)).toBe(true);
    }
  });

  it('escapeMarkers leaves other brackets alone', () => {
    expect(escapeMarkers('[a] [12] [1234] x[0]')).toBe('[a] \\[12\\] [1234] x\\[0\\]');
  });
});

describe('extractiveAnswer for a when question', () => {
  it("opens each fact with its own time, resolved against its message's date", () => {
    const s = source(1, 'Caroline went to the LGBTQ support group yesterday.', 1);
    s.fact.message_ts = '2023-05-08T13:56:00.000Z';
    const text = extractiveAnswer('When did Caroline go to the LGBTQ support group?', [s], 'quick', [], null);
    expect(text).toBe('On 7 May 2023: Caroline went to the LGBTQ support group yesterday. (ana) [1]');
  });
});
