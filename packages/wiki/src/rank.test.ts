import { describe, expect, it } from 'vitest';
import {
  codeLike,
  HALF_LIFE_DAYS,
  isSlowDecay,
  KEY_FACTS_MAX,
  keyFactScore,
  keyFacts,
  MAX_KEY_FACTS_PER_MESSAGE,
  NEAR_DUPLICATE_OVERLAP,
  pointsAway,
  RANK_WEIGHTS,
  recencyFactor,
  wordOverlap,
  words,
} from './rank.js';
import type { WikiFact } from './types.js';

const NOW = new Date('2026-06-01T00:00:00Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 86_400_000).toISOString();
let seq = 0;
const fact = (over: Partial<WikiFact> = {}): WikiFact => {
  seq++;
  return {
    id: `f${String(seq).padStart(3, '0')}`,
    channel_id: 'C1',
    memory_text: `fact number ${seq}`,
    quality_score: 0.7,
    importance: 'medium',
    fact_type: 'observation',
    topic_tags: [],
    entity_tags: [],
    author_name: 'Ann',
    message_ts: daysAgo(1),
    source_message_id: `m${seq}`,
    permalink: `https://x/p${seq}`,
    superseded_by: null,
    ...over,
  };
};

describe('keyFactScore', () => {
  it('weights sum to 1 and a score lies in [0, 1]', () => {
    expect(Object.values(RANK_WEIGHTS).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
    const best = fact({ quality_score: 1, importance: 'high', message_ts: NOW.toISOString() });
    expect(keyFactScore(best, { now: NOW, citationCount: 100 })).toBeCloseTo(1, 10);
    const worst = fact({ quality_score: 0, importance: 'low', message_ts: daysAgo(10_000) });
    const s = keyFactScore(worst, { now: NOW, citationCount: 0 });
    expect(s).toBeGreaterThanOrEqual(0);
    expect(s).toBeLessThan(0.05);
  });

  it('each factor raises the score', () => {
    const base = fact();
    const s = keyFactScore(base, { now: NOW });
    expect(keyFactScore({ ...base, quality_score: 0.9 }, { now: NOW })).toBeGreaterThan(s);
    expect(keyFactScore({ ...base, importance: 'high' }, { now: NOW })).toBeGreaterThan(s);
    expect(keyFactScore(base, { now: NOW, citationCount: 3 })).toBeGreaterThan(s);
    expect(keyFactScore({ ...base, message_ts: daysAgo(0) }, { now: NOW })).toBeGreaterThan(s);
  });

  it('recent facts are boosted; ordinary facts halve every default half-life', () => {
    const f = fact({ message_ts: daysAgo(HALF_LIFE_DAYS.default) });
    expect(recencyFactor(f, NOW)).toBeCloseTo(0.5, 6);
    expect(recencyFactor(fact({ message_ts: daysAgo(0) }), NOW)).toBe(1);
    expect(recencyFactor(fact({ message_ts: daysAgo(-5) }), NOW)).toBe(1);
  });

  it('decisions, architecture and policies decay slowly; high importance does not decay', () => {
    const old = daysAgo(180);
    const ordinary = recencyFactor(fact({ message_ts: old }), NOW);
    const decision = recencyFactor(fact({ message_ts: old, fact_type: 'decision' }), NOW);
    const architecture = recencyFactor(fact({ message_ts: old, topic_tags: ['system-design'] }), NOW);
    const policy = recencyFactor(fact({ message_ts: old, entity_tags: ['Security Policy'] }), NOW);
    expect(ordinary).toBeLessThan(0.02);
    for (const slow of [decision, architecture, policy])
      expect(slow).toBeCloseTo(0.5 ** (180 / HALF_LIFE_DAYS.slow), 6);
    expect(recencyFactor(fact({ message_ts: daysAgo(5000), importance: 'high' }), NOW)).toBe(1);
    expect(isSlowDecay(fact({ topic_tags: ['kafka'] }))).toBe(false);
    expect(isSlowDecay(fact({ topic_tags: ['database_schema'] }))).toBe(true);
    expect(isSlowDecay(fact({ topic_tags: ['code review guidelines'] }))).toBe(true);
  });
});

describe('keyFacts', () => {
  it('takes 5 to 10 facts, best first, dropping superseded ones', () => {
    const facts = Array.from({ length: 14 }, (_, i) => fact({ quality_score: 0.5 + i * 0.03 }));
    const superseded = fact({ quality_score: 1, importance: 'high', superseded_by: 'fX' });
    const top = keyFacts([...facts, superseded], 10, { now: NOW });
    expect(top).toHaveLength(KEY_FACTS_MAX);
    expect(top).not.toContain(superseded);
    expect(top[0]).toBe(facts[13]);
    expect(keyFacts(facts, 3, { now: NOW })).toHaveLength(5);
    expect(keyFacts(facts, 50, { now: NOW })).toHaveLength(10);
    expect(keyFacts(facts.slice(0, 3), 10, { now: NOW })).toHaveLength(3);
  });

  it('takes at most 2 facts per source message and no duplicate texts', () => {
    const same = Array.from({ length: 5 }, () => fact({ source_message_id: 'm-same', quality_score: 0.99 }));
    const others = Array.from({ length: 6 }, () => fact({ quality_score: 0.6 }));
    const dup = fact({ memory_text: others[0]!.memory_text, quality_score: 0.95 });
    const top = keyFacts([...same, ...others, dup], 10, { now: NOW });
    expect(top.filter((f) => f.source_message_id === 'm-same')).toHaveLength(MAX_KEY_FACTS_PER_MESSAGE);
    expect(new Set(top.map((f) => f.memory_text.toLowerCase())).size).toBe(top.length);
  });

  it('uses low-band facts only to reach the minimum of 5', () => {
    const good = Array.from({ length: 3 }, () => fact({ quality_score: 0.8 }));
    const low = Array.from({ length: 6 }, () => fact({ quality_score: 0.3, importance: 'high' }));
    const top = keyFacts([...low, ...good], 10, { now: NOW });
    expect(top).toHaveLength(5);
    expect(top.filter((f) => f.quality_score < 0.5)).toHaveLength(2);
    const many = Array.from({ length: 6 }, () => fact({ quality_score: 0.6 }));
    expect(keyFacts([...low, ...many], 10, { now: NOW }).every((f) => f.quality_score >= 0.5)).toBe(true);
  });

  it('uses citation counts to break otherwise equal facts', () => {
    const a = fact({ message_ts: daysAgo(3) });
    const b = fact({ message_ts: daysAgo(3) });
    const ranked = keyFacts([a, b], 5, { now: NOW, citationCounts: new Map([[b.id, 4]]) });
    expect(ranked[0]).toBe(b);
  });
});

describe('keyFacts: near duplicates and the on-topic tier', () => {
  it('keeps one of two facts that say the same thing in nearly the same words', () => {
    const a = fact({ memory_text: 'you can run lein upgrade 2.7.1 as a temporary workaround', quality_score: 0.9 });
    const b = fact({ memory_text: 'run lein upgrade 2.7.1 as a temporary workaround for now', quality_score: 0.8 });
    const others = [1, 2, 3, 4, 5].map((i) => fact({ memory_text: `unrelated statement ${i} about topic ${i * 7}` }));
    expect(wordOverlap(words(a.memory_text), words(b.memory_text))).toBeGreaterThanOrEqual(NEAR_DUPLICATE_OVERLAP);
    const picked = keyFacts([a, b, ...others], 10, { now: NOW });
    expect(picked).toContain(a);
    expect(picked).not.toContain(b);
    // Short texts (under 4 words) never count as near duplicates.
    expect(wordOverlap(words('use lein'), words('use lein please'))).toBe(0);
  });

  it('takes on-topic facts first, and off-topic ones only to reach 5', () => {
    const tips = [
      'upgrade with brew',
      'profiles merge left to right',
      'uberjar needs a main namespace',
      'deps resolve from clojars',
      'plugins load first',
      'checkouts link local projects',
    ];
    const on = [0, 1, 2].map((i) => fact({ memory_text: `leiningen: ${tips[i]}`, quality_score: 0.6 }));
    const off = [1, 2, 3, 4].map((i) =>
      fact({
        memory_text: ['nippy thaws intervals', 'emacs theme tweaks', 'ssh host keys', 'coffee break'][i - 1]!,
        quality_score: 0.95,
        importance: 'high',
      }),
    );
    const picked = keyFacts([...off, ...on], 10, { now: NOW, onTopic: (f) => f.memory_text.includes('leiningen') });
    expect(picked.slice(0, 3)).toEqual(on);
    expect(picked).toHaveLength(5);
    const enough = [3, 4, 5].map((i) => fact({ memory_text: `leiningen: ${tips[i]}` }));
    const all = keyFacts([...off, ...on, ...enough], 10, {
      now: NOW,
      onTopic: (f) => f.memory_text.includes('leiningen'),
    });
    expect(all).toHaveLength(6);
    expect(all.every((f) => f.memory_text.includes('leiningen'))).toBe(true);
  });

  it('titled: facts naming the title come before facts about a covered tag, a code fragment does not', () => {
    const lein = ['lein upgrade 2.7.1 fixes the https error', 'leiningen self-installs keep every jar'].map((t) =>
      fact({ memory_text: t, quality_score: 0.6 }),
    );
    const cider = ['cider menus show only in clojure buffers', 'cider jack-in starts a repl', 'cider needs nrepl'].map(
      (t) => fact({ memory_text: t, quality_score: 0.95, importance: 'high' }),
    );
    const code = fact({ memory_text: ':plugins [[lein-ancient "0.6.15"]]', quality_score: 0.99, importance: 'high' });
    const picked = keyFacts([...cider, code, ...lein], 10, {
      now: NOW,
      onTopic: (f) => /lein|cider/.test(f.memory_text),
      titled: (f) => f.memory_text.includes('lein'),
    });
    expect(new Set(picked.slice(0, 2))).toEqual(new Set(lein));
    expect(picked.slice(2)).toEqual(expect.arrayContaining(cider));
    expect(picked).toContain(code);
    expect(picked.indexOf(code)).toBeGreaterThan(1);
    expect(codeLike(':require [react-transition-group :as rtg])')).toBe(true);
    expect(codeLike('(defn f [x] (inc x))')).toBe(true);
    expect(codeLike('{:a 1 :b 2} => [1 2]')).toBe(true);
    expect(codeLike('lein upgrade 2.7.1 fixes the https error')).toBe(false);
  });
});

describe('pointsAway', () => {
  it('recognises a statement that introduces what it does not contain', () => {
    expect(pointsAway('When tatyana tries to package a jar, tatyana sees the following.')).toBe(true);
    expect(pointsAway('The config looks like this:')).toBe(true);
    expect(pointsAway('Error output below')).toBe(true);
    expect(pointsAway('Run lein upgrade 2.7.1 as a workaround.')).toBe(false);
    expect(pointsAway('Use the following flag: --force')).toBe(false);
  });

  it('a fact that points away is a key fact only to reach 5', () => {
    const away = fact({ memory_text: 'When packaging a jar, tatyana sees the following.', quality_score: 0.99 });
    const others = [
      'alpha beta gamma delta',
      'epsilon zeta theta iota',
      'kappa lambda omicron sigma',
      'upsilon omega rho tau',
      'phi chi psi nu',
      'mu xi pi eta',
    ].map((t) => fact({ memory_text: t, quality_score: 0.6 }));
    expect(keyFacts([away, ...others], 10, { now: NOW })).not.toContain(away);
    expect(keyFacts([away, ...others.slice(0, 3)], 10, { now: NOW })).toContain(away);
  });
});
