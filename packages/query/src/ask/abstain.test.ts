import type { AskStore } from '@atlas/stores';
import { describe, expect, it } from 'vitest';
import {
  ABSTAIN_COSINE_FLOOR,
  type AskEvidence,
  abstains,
  abstentionText,
  contentTerms,
  KEYWORD_KEEP,
  mentionsBeyondAddress,
  PERSON_TOP,
  personMismatch,
  termCoverage,
} from './abstain.js';
import { answerAsk } from './engine.js';
import { EXTRACTIVE_NOTE } from './notes.js';
import { askSource } from './sources.test-support.js';
import { askStreamViolations } from './stream-rules.js';
import { AskBody, type AskEvent, type AskLlm, type AskPorts, type AskSource } from './types.js';

const USE = 'use-lite-512@energetic-ai-0.2.0';
const E5 = 'onnx:e5-small-v2-q';
const floorOf = (id: string) => ABSTAIN_COSINE_FLOOR[id]!;

describe('the abstention floors', () => {
  it('are calibrated for the local encoders, within the cosine range where they separate', () => {
    for (const id of [USE, E5]) {
      expect(floorOf(id)).toBeGreaterThan(0);
      expect(floorOf(id)).toBeLessThan(1);
    }
  });
});

describe('abstains', () => {
  const ev = (bestCosine: number | null, termCoverage = 0, embedderId: string | null = USE): AskEvidence => ({
    embedderId,
    bestCosine,
    termCoverage,
  });

  it('abstains below the floor of the embedder and answers at or above it', () => {
    for (const id of [USE, E5]) {
      expect(abstains(ev(floorOf(id) - 0.01, 0, id), 5)).toBe(true);
      expect(abstains(ev(floorOf(id), 0, id), 5)).toBe(false);
      expect(abstains(ev(floorOf(id) + 0.2, 0, id), 5)).toBe(false);
    }
  });

  it('abstains when nothing was found, whatever the evidence', () => {
    expect(abstains(ev(null, 0, null), 0)).toBe(true);
    expect(abstains(ev(0.99, 1), 0)).toBe(true);
  });

  it('keeps sources holding most of the query terms below the floor (a name the embedder does not know)', () => {
    expect(abstains(ev(floorOf(USE) - 0.1, KEYWORD_KEEP - 0.01), 3)).toBe(true);
    expect(abstains(ev(floorOf(USE) - 0.1, KEYWORD_KEEP), 3)).toBe(false);
    expect(abstains(ev(floorOf(USE) - 0.1, 1), 3)).toBe(false);
  });

  it('does not abstain without a cosine or with an uncalibrated embedder', () => {
    expect(abstains(ev(null, 0, null), 3)).toBe(false);
    expect(abstains(ev(0.01, 0, 'openai:text-embedding-3-small'), 3)).toBe(false);
  });
});

describe('personMismatch', () => {
  /** A source by `author` (the fixture's citation author too). */
  const by = (n: number, author: string, text: string): AskSource => {
    const s = askSource(n, text);
    return { ...s, fact: { ...s.fact, author_name: author }, citation: { ...s.citation, author } };
  };
  const chat = [
    by(1, 'Melanie', 'Melanie ran a charity race for mental health and realized self-care is important.'),
    by(2, 'Melanie', 'Melanie is painting a lake sunrise.'),
    by(3, 'Melanie', 'Melanie took the kids camping in the mountains.'),
    by(4, 'Caroline', 'Caroline went to an LGBTQ support group.'),
  ];

  it("finds a question about one author answered only by another's words", () => {
    expect(personMismatch('What did Caroline realize after her charity race?', chat)).toEqual({
      asked: 'Caroline',
      found: ['Melanie'],
    });
  });

  it('keeps a question about the author of a best source, with a possessive too', () => {
    expect(personMismatch('What did Melanie realize after her charity race?', chat)).toBeNull();
    expect(personMismatch("What was Melanie's charity race for?", chat)).toBeNull();
  });

  it('keeps a best source of another author that names the person asked about', () => {
    const named = [by(1, 'Melanie', 'Melanie cheered Caroline on at her charity race.'), ...chat.slice(1)];
    expect(personMismatch('What did Caroline do at the charity race?', named)).toBeNull();
  });

  it('does not count a name that only addresses the person asked about', () => {
    const addressed = [
      by(1, 'Melanie', 'Caroline, Melanie ran a charity race for mental health last Saturday.'),
      by(2, 'Melanie', 'Proud of you, Caroline! Melanie realized self-care is important.'),
      by(3, 'Caroline', 'Caroline went to an LGBTQ support group.'),
    ];
    expect(personMismatch('What did Caroline realize after her charity race?', addressed, 2)).toEqual({
      asked: 'Caroline',
      found: ['Melanie'],
    });
    expect(mentionsBeyondAddress('Caroline, the race was great', 'Caroline')).toBe(false);
    expect(mentionsBeyondAddress('Great race, Caroline', 'Caroline')).toBe(false);
    expect(mentionsBeyondAddress("Caroline's race was great", 'Caroline')).toBe(true);
    expect(mentionsBeyondAddress('Melanie ran with Caroline last week', 'Caroline')).toBe(true);
    expect(mentionsBeyondAddress('Ana Lima ran the race', 'Ana Lima')).toBe(true);
    expect(mentionsBeyondAddress('Anabel ran the race', 'Ana Lima')).toBe(false);
  });

  it('looks only at the best PERSON_TOP sources', () => {
    const late = [...chat.slice(0, 3), by(4, 'Caroline', 'Caroline ran a charity race too.')];
    expect(PERSON_TOP).toBeLessThan(4);
    expect(personMismatch('What did Caroline realize after her charity race?', late)).not.toBeNull();
    expect(personMismatch('What did Caroline realize after her charity race?', late, 4)).toBeNull();
  });

  it('does not apply with no author named, two named, or nothing found', () => {
    expect(personMismatch('Who ran a charity race?', chat)).toBeNull();
    expect(personMismatch('Did Caroline and Melanie both run the charity race?', chat)).toBeNull();
    expect(personMismatch('What did Bob realize after the race?', chat)).toBeNull();
    expect(personMismatch('What did Caroline realize?', [])).toBeNull();
  });

  it('matches whole words of a name: the first name of a full name, not a part of a word', () => {
    const full = [
      by(1, 'Ana Lima', 'Ana Lima moved the deploys to Tuesdays.'),
      by(2, 'Jo Park', 'Jo Park owns the alerts.'),
    ];
    expect(personMismatch('When does Ana deploy?', [full[1]!, full[0]!], 1)).toEqual({
      asked: 'Ana Lima',
      found: ['Jo Park'],
    });
    // "Jo" has under 3 letters: only the whole name "Jo Park" names that author; "Joanna" never does.
    expect(personMismatch('What does Joanna own?', full)).toBeNull();
    expect(personMismatch('What does Jo own?', full)).toBeNull();
  });

  it('reads a one-word form as a name only when written as one: capitalised, not the first word, not a stop word', () => {
    const will = [by(1, 'Ana', 'Ana ships the release on Friday.'), by(2, 'Will Smith', 'Will Smith reviews it.')];
    expect(personMismatch('When will we ship the release?', will)).toBeNull();
    expect(personMismatch('Will the release ship on Friday?', will)).toBeNull();
    expect(personMismatch('What did Will review?', [will[0]!])).toBeNull(); // Will is no author of these sources
    expect(personMismatch('When does will smith ship the release?', will, 1)).toEqual({
      asked: 'Will Smith',
      found: ['Ana'],
    });
    // "will" is a stop word: alone it never names Will Smith; a first name that is none does, capitalised.
    expect(personMismatch('When does Will ship the release?', will, 1)).toBeNull();
    const alex = [by(1, 'Ana', 'Ana ships the release on Friday.'), by(2, 'Alex Miller', 'Alex Miller reviews it.')];
    expect(personMismatch('When does Alex ship the release?', alex, 1)).toEqual({
      asked: 'Alex Miller',
      found: ['Ana'],
    });
    expect(personMismatch('When does alex ship the release?', alex, 1)).toBeNull();
  });

  it('makes ask abstain, and the abstention says whose the closest memories are', () => {
    const evidence: AskEvidence = {
      embedderId: E5,
      bestCosine: 0.95,
      termCoverage: 1,
      personMismatch: { asked: 'Caroline', found: ['Melanie'] },
    };
    expect(abstains(evidence, 4)).toBe(true);
    expect(
      abstentionText({ query: 'Caroline realize charity race', channels: ['locomo'], facts: 4 }, evidence, false),
    ).toBe(
      'The knowledge base holds nothing relevant to this question. I searched 4 memories in #locomo for "Caroline realize charity race". The closest memories are from Melanie and do not mention Caroline, so none is listed.',
    );
  });
});

describe('contentTerms and termCoverage', () => {
  it('keeps the content words as crude stems', () => {
    expect(contentTerms('weather in Paris')).toEqual(['weather', 'pari']);
    expect(contentTerms('the races and painted boats')).toEqual(['rac', 'paint', 'boat']);
    expect(contentTerms('race raced racing parties party bus')).toEqual(['rac', 'parti', 'bus']);
  });

  it('is the best share of the terms one source holds', () => {
    const s = (n: number, text: string) => source(n, text);
    const terms = contentTerms('kafka consumer lag');
    expect(termCoverage(terms, [s(1, 'The consumer restarted.'), s(2, 'Kafka consumer lag is high')])).toBe(1);
    expect(termCoverage(terms, [s(1, 'The consumer restarted.')])).toBeCloseTo(1 / 3);
    expect(termCoverage(terms, [])).toBe(0);
    expect(termCoverage([], [s(1, 'x')])).toBe(1);
  });
});

describe('abstentionText', () => {
  const evidence: AskEvidence = { embedderId: USE, bestCosine: 0.12, termCoverage: 0 };
  it('says nothing relevant is held and what was searched, with no citation marker', () => {
    const t = abstentionText(
      { query: 'weather in Paris', channels: ['help', 'general'], facts: 1234 },
      evidence,
      false,
    );
    expect(t).toContain('The knowledge base holds nothing relevant to this question.');
    expect(t).toContain('I searched 1,234 memories in #help and #general for "weather in Paris".');
    expect(t).toContain(`similarity of 0.12 to the question, below the ${floorOf(USE).toFixed(2)}`);
    expect(t).not.toMatch(/\[\d+\]/);
  });
  it('names every channel of a global ask by count, and escapes a [n] in the query', () => {
    const t = abstentionText(
      { query: 'what is xs[0]', channels: ['a', 'b', 'c', 'd', 'e'], facts: 1 },
      { embedderId: null, bestCosine: null, termCoverage: 0 },
      true,
    );
    expect(t).toContain('I searched 1 memory in every channel (5) for "what is xs\\[0\\]".');
    expect(t).not.toContain('similarity');
    expect(abstentionText({ query: 'q', channels: ['a', 'b', 'c', 'd', 'e'], facts: 2 }, evidence, false)).toContain(
      '#a, #b, #c and 2 more channels',
    );
  });
});

// --- The engine over fake ports: two facts of #general, a 3-d embedder whose query vector is set per test. ---

const source = (n: number, text: string): AskSource => askSource(n, text, { topic: 'ops' });

const FACTS = [
  { id: 'f1', text: 'The Kafka consumer lag alert fires after 5 minutes.', vector: [1, 0, 0] },
  { id: 'f2', text: 'Deploys go out on Tuesdays after the standup.', vector: [0, 1, 0] },
];

/**
 * Ports whose keyword index matches every fact (so both facts are always sources) and whose embedder maps a query
 * to the unit vector at cosine `cosine` to both facts (`cosine` at most 0.7).
 */
function fakePorts(cosine: number, quality: AskLlm | null = null) {
  if (cosine > 0.7) throw new Error('fakePorts: a cosine over 0.7 to both facts is not a unit vector');
  const turns: unknown[] = [];
  const memory = (f: (typeof FACTS)[number]) => ({
    id: f.id,
    memory_text: f.text,
    quality_score: 0.8,
    tier: 'hot',
    channel_id: 'C1',
    author_name: 'ana',
    message_ts: '2024-03-05T10:00:00.000Z',
    topic_tags: ['ops'],
    entity_tags: [],
    importance: 'medium',
    fact_type: 'observation',
    source_message_id: `m-${f.id}`,
    permalink: `https://example.test/${f.id}`,
  });
  const dot = (a: number[], b: number[]) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);
  const queryVector = [cosine, cosine, Math.sqrt(1 - 2 * cosine * cosine)];
  const ports: AskPorts = {
    search: {
      documents: {
        getMemories: async (ids: readonly string[]) =>
          new Map(FACTS.filter((f) => ids.includes(f.id)).map((f) => [f.id, memory(f)])) as never,
      },
      keyword: {
        search: async () => ({ hits: FACTS.map((f) => ({ factId: f.id, score: 0.5, highlights: [] })), total: 2 }),
        count: async () => ({ total: 2 }),
      } as never,
      vectors: {
        embedder: { id: USE, dim: 3, embed: async (texts: readonly string[]) => texts.map(() => queryVector) },
        store: {
          matches: async (q: { minScore: number }) =>
            FACTS.map((f) => ({ factId: f.id, score: dot(queryVector, f.vector) })).filter(
              (h) => h.score >= q.minScore,
            ),
          similarities: async (q: { factIds: readonly string[] }) =>
            new Map(FACTS.filter((f) => q.factIds.includes(f.id)).map((f) => [f.id, dot(queryVector, f.vector)])),
        } as never,
      },
    },
    documents: {
      getMessagesIn: async () => [],
      listChannels: async () => [
        { id: 'C1', name: 'general', platform: 'platform_a', last_sync: null, message_count: 2, fact_count: 2 },
      ],
    },
    graphRetrieval: null,
    store: {
      context: async () => null,
      recordTurn: async (t: unknown) => {
        turns.push(t);
      },
    } as unknown as AskStore,
    llm: { quality, fast: null },
  };
  return { ports, turns };
}

const run = async (ports: AskPorts, question: string) => {
  const events: AskEvent[] = [];
  for await (const e of answerAsk(ports, {
    body: AskBody.parse({ question }),
    channelId: 'C1',
    attachments: [],
  }))
    events.push(e);
  const text = events.flatMap((e) => (e.type === 'token' ? [e.content] : [])).join('');
  return { events, text, done: events.at(-1) as Extract<AskEvent, { type: 'done' }> };
};

/** An LLM that records whether it was asked and answers citing source 1. */
const recordingLlm = () => {
  const calls: unknown[] = [];
  const llm: AskLlm = {
    acceptsImages: false,
    stream(messages) {
      calls.push(messages);
      return Object.assign(
        (async function* () {
          yield 'The lag alert fires after 5 minutes [1].';
        })(),
        { usage: () => ({ prompt_tokens: 10, completion_tokens: 5 }) },
      );
    },
  };
  return { llm, calls };
};

describe('answerAsk abstaining', () => {
  it('streams the abstention offline: tokens, no citation event, done with citations_count 0, the turn saved', async () => {
    const { ports, turns } = fakePorts(floorOf(USE) - 0.15);
    const { events, text, done } = await run(ports, "What's the weather in Paris?");
    expect(askStreamViolations(events, text)).toEqual([]);
    expect(text).toBe(
      `The knowledge base holds nothing relevant to this question. I searched 2 memories in #general for "weather Paris". The closest memory had a similarity of ${(floorOf(USE) - 0.15).toFixed(2)} to the question, below the ${floorOf(USE).toFixed(2)} that counts as relevant, so none is listed.`,
    );
    expect(events.filter((e) => e.type === 'citation')).toEqual([]);
    expect(events.map((e) => e.type).filter((t) => t !== 'token')).toEqual(['done']);
    expect(done).toMatchObject({ type: 'done', citations_count: 0 });
    expect(Number.isInteger(done.tokens_used) && done.tokens_used > 0).toBe(true);
    expect(typeof done.session_id).toBe('string');
    expect(events.every((e) => e.type !== 'token' || e.message_id === done.message_id)).toBe(true);
    for (const f of FACTS) expect(text).not.toContain(f.text);
    expect(text).not.toContain(EXTRACTIVE_NOTE);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({
      answer: { content: text, citations: [], metadata: { answered_by: 'abstention' } },
    });
  });

  it('answers with cited facts when the best cosine reaches the floor', async () => {
    const { ports } = fakePorts(floorOf(USE) + 0.15);
    const { events, text, done } = await run(ports, 'When does the Kafka consumer lag alert fire?');
    expect(askStreamViolations(events, text)).toEqual([]);
    expect(text).toContain(FACTS[0]!.text);
    expect(done.citations_count).toBeGreaterThan(0);
    expect(text).not.toContain('nothing relevant');
  });

  it('does not call the LLM when abstaining, and streams the same abstention', async () => {
    const { llm, calls } = recordingLlm();
    const { ports, turns } = fakePorts(floorOf(USE) - 0.15, llm);
    const { events, text, done } = await run(ports, "What's the weather in Paris?");
    expect(calls).toHaveLength(0);
    expect(askStreamViolations(events, text)).toEqual([]);
    expect(text.startsWith('The knowledge base holds nothing relevant to this question.')).toBe(true);
    expect(done.citations_count).toBe(0);
    expect(turns[0]).toMatchObject({ answer: { metadata: { answered_by: 'abstention' } } });
  });

  it('calls the LLM with the sources when the evidence is strong enough', async () => {
    const { llm, calls } = recordingLlm();
    const { ports } = fakePorts(floorOf(USE) + 0.15, llm);
    const { events, text, done } = await run(ports, 'When does the Kafka consumer lag alert fire?');
    expect(calls).toHaveLength(1);
    expect(askStreamViolations(events, text)).toEqual([]);
    expect(done.citations_count).toBe(1);
  });
});
