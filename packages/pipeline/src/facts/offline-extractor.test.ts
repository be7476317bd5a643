import { ConfigSchema, Fact } from '@atlas/core';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLOJURIANS, discordInputs, ETHGLOBAL, OLAKE, SlackExport } from '../test-support.js';
import { MAX_FACTS_PER_MESSAGE, OfflineFactExtractor, stripFileShare } from './offline-extractor.js';
import type { ExtractionInput } from './port.js';
import { selectFacts } from './select.js';

/** The configured default (spec quality gate: 0.5). */
const QUALITY_THRESHOLD_DEFAULT = ConfigSchema.parse({}).QUALITY_THRESHOLD;
const extractor = new OfflineFactExtractor();
const slack = new SlackExport(CLOJURIANS, 'clojurians');
const channelCache = new Map<string, ExtractionInput[]>();
/** A real Clojurians message by channel and Slack ts, with the thread context the projector would hold. */
const real = (channel: string, ts: string): ExtractionInput => {
  if (!channelCache.has(channel)) channelCache.set(channel, slack.inputs(channel));
  const found = channelCache.get(channel)!.find((i) => i.message.platformMessageId === ts);
  if (!found) throw new Error(`no message ${channel}/${ts}`);
  return found;
};
const kept = async (input: ExtractionInput) => selectFacts(await extractor.extract(input), QUALITY_THRESHOLD_DEFAULT);

describe('OfflineFactExtractor: fact types on real messages', () => {
  it('finds a release decision, with the continuation kept (fulcro: "Fulcro 2.1.5 released. Includes …")', async () => {
    const [fact] = await kept(real('fulcro', '1517459568.000129'));
    expect(fact).toMatchObject({ factType: 'decision', importance: 'high' });
    expect(fact!.memoryText).toMatch(/^Fulcro 2\.1\.5 released\. Includes the with-parent-context macro/);
    expect(fact!.qualityScore).toBeGreaterThanOrEqual(0.8);
    expect(fact!.entityTags).toContain('Fulcro');
  });

  it('resolves "I" to the author in a release ("I’ve released Expound 0.5.0")', async () => {
    const input = real('clojure-spec', '1517976443.000089');
    const [fact] = await kept(input);
    expect(fact!.factType).toBe('decision');
    expect(fact!.memoryText).toBe(
      `${input.message.author.name} has released Expound 0.5.0, which includes this feature.`,
    );
    expect(fact!.threadTs).toBe('1517788062.000125');
  });

  it('finds an action item with owner and deadline ("I’ll push the new version of Keechma Toolbox this week")', async () => {
    const input = real('keechma', '1517834881.000225');
    const [fact] = await kept(input);
    const author = input.message.author.name;
    expect(fact).toMatchObject({ factType: 'action_item', importance: 'medium' });
    expect(fact!.memoryText).toBe(`${author} will push the new version of Keechma Toolbox this week.`);
    expect(fact!.actionTags).toEqual(['push', author, 'this week']);
    expect(fact!.qualityScore).toBeGreaterThanOrEqual(0.8);
  });

  it('finds a question and attributes it (beginners: "Can you pass a defrecord that implements a defprotocol …?")', async () => {
    const input = real('beginners', '1518130307.000201');
    const [fact] = await kept(input);
    expect(fact!.factType).toBe('question');
    expect(fact!.memoryText).toMatch(new RegExp(`^${input.message.author.name} asked: "Can you pass a defrecord`));
    expect(fact!.qualityScore).toBeLessThan(0.8);
  });

  it('scores a vague question low, its link kept with it (beginners: "does anyone know of a simple gist …? <url>")', async () => {
    const [fact] = await extractor.extract(real('beginners', '1517452262.000074'));
    expect(fact!.factType).toBe('question');
    expect(fact!.memoryText).toContain('https://github.com/stuartsierra/component#entry-points-in-production');
    expect(fact!.qualityScore).toBeLessThan(QUALITY_THRESHOLD_DEFAULT);
  });

  it('finds an opinion ("I\'d recommend either `clojure.test` or `expectations.clojure.test`")', async () => {
    const input = real('beginners', '1518072434.000178');
    const [fact] = await kept(input);
    expect(fact!.factType).toBe('opinion');
    // It answers raheel's question just before it in the channel, which it carries (it is short).
    expect(input.answers?.rootAuthorName).toBe('raheel');
    expect(fact!.memoryText).toBe(
      `${input.message.author.name} would recommend either clojure.test or expectations.clojure.test (in reply to raheel: "1 question is: how guilty should i feel that I am writing less tests with the REPL based…")`,
    );
    expect(fact!.topicTags).toEqual(expect.arrayContaining(['clojure.test', 'expectations.clojure.test']));
    expect(fact!.qualityScore).toBeGreaterThanOrEqual(0.5);
    expect(fact!.qualityScore).toBeLessThan(0.8);
  });

  it('finds a technical observation ("the ScheduledThreadPoolExecutor API is pretty simple, it comes with the JVM …")', async () => {
    const [fact] = await kept(real('beginners', '1518109444.000776'));
    expect(fact!.factType).toBe('observation');
    expect(fact!.memoryText).toMatch(/^The ScheduledThreadPoolExecutor API is pretty simple, it comes with the JVM/);
    expect(fact!.entityTags).toEqual(
      expect.arrayContaining(['ScheduledThreadPoolExecutor API', 'JVM', 'Runnable', 'Callable']),
    );
  });

  it('adds the thread root to a short reply and fills thread_context_summary (beginners thread on get-in)', async () => {
    const input = real('beginners', '1517699380.000069');
    const [fact] = await kept(input);
    expect(fact!.memoryText).toMatch(
      /^Specter is a life-saver in certain situations \(in reply to schmee: "be wary of get-in/,
    );
    expect(fact!.threadContextSummary).toMatch(/^Reply to schmee: "be wary of get-in, assoc-in/);
    expect(fact!.threadTs).toBe(input.message.threadTs);
  });

  it('turns a personal switch into a lower-importance decision ("… then I switched to using the Cursive/IntelliJ integration")', async () => {
    const [fact] = await kept(real('beginners', '1518033193.000116'));
    expect(fact!.factType).toBe('decision');
    expect(fact!.importance).not.toBe('high');
  });
});

describe('OfflineFactExtractor: noise', () => {
  const chitChat: Array<[string, string]> = [
    ['arachne', '1517774231.000034'], // :thumbsup:
    ['beginners', '1517945119.000168'], // right, ok. Thank you.
    ['clojure', '1517971524.000158'], // haha
    ['clojure', '1517775963.000060'], // Thanks for the help :slightly_smiling_face:
    ['clojurescript', '1517862781.000079'], // thanks for the help
    ['beginners', '1518014627.000233'], // <@U…> thanks dude ..
    ['beginners', '1517848363.000235'], // <@U…> thanks! I'll try it out in a bit.
    ['clojure-italy', '1518032476.000639'], // lol
    ['hoplon', '1517447342.000172'], // lol yes
  ];
  it.each(chitChat)('gives no candidate at all for chit-chat (%s %s)', async (channel, ts) => {
    expect(await extractor.extract(real(channel, ts))).toEqual([]);
  });

  it('gives nothing for joins and for a bare file upload', async () => {
    const join = slack.inputs('clojure-russia', ['2018-02-01'])[0]!;
    expect(join.message.subtype).toBe('channel_join');
    expect(await extractor.extract(join)).toEqual([]);
    expect(stripFileShare('<@U1> uploaded a file: <https://x/f.clj|Untitled>')).toBe('');
    expect(stripFileShare('<@U1> uploaded a file: <https://x|T> and commented: So the rule')).toBe('So the rule');
  });

  it('scores non-English text below the threshold (clojure-italy)', async () => {
    const facts = await extractor.extract(real('clojure-italy', '1517475501.000106'));
    expect(facts.every((f) => f.sourceLang === 'it' && f.qualityScore < QUALITY_THRESHOLD_DEFAULT)).toBe(true);
  });
});

describe('OfflineFactExtractor: invariants over whole real corpora', () => {
  const corpora: Record<string, () => ExtractionInput[]> = {
    clojurians: () => slack.channelNames().flatMap((c) => slack.inputs(c)),
    olake: () => {
      const o = new SlackExport(OLAKE, 'olake');
      return o.channelNames().flatMap((c) => o.inputs(c));
    },
    ethglobal: () => discordInputs(ETHGLOBAL),
  };
  for (const [name, load] of Object.entries(corpora)) {
    describe(name, () => {
      let runs: Array<{ input: ExtractionInput; facts: Fact[] }>;
      beforeAll(() => {
        runs = load().map((input) => ({ input, facts: extractor.extractSync(input) }));
      });

      it('returns valid Facts: Fact.parse passes, scores in [0, 1], at most 2 per message, 1–4 topics', () => {
        for (const { input, facts } of runs) {
          expect(facts.length).toBeLessThanOrEqual(MAX_FACTS_PER_MESSAGE);
          for (const f of facts) {
            expect(Fact.parse(f)).toEqual(f);
            expect(f.qualityScore).toBeGreaterThanOrEqual(0);
            expect(f.qualityScore).toBeLessThanOrEqual(1);
            expect(f.topicTags.length).toBeGreaterThanOrEqual(1);
            expect(f.topicTags.length).toBeLessThanOrEqual(4);
            expect(f).toMatchObject({ authorId: input.message.author.id, validAt: input.message.timestamp });
            if (f.factType !== 'action_item') expect(f.actionTags).toEqual([]);
          }
        }
      });

      it('keeps the spec bands: questions under 0.8; kept facts ≥ 40 characters unless a release headline, a dated event or a first-person statement', () => {
        const dated = /\b(yesterday|today|tonight|ago|last|next|this (morning|week|weekend|year))\b/i;
        for (const f of runs.flatMap((r) => r.facts)) {
          if (f.factType === 'question') expect(f.qualityScore).toBeLessThan(0.8);
          if (f.qualityScore < QUALITY_THRESHOLD_DEFAULT || f.memoryText.length >= 40) continue;
          const words = f.memoryText.split(/\s+/).length;
          if (f.memoryText.includes(f.authorName) && words >= 6) continue; // "alice is planning a trip to Lisbon."
          if (dated.test(f.memoryText))
            expect(f.memoryText.split(/\s+/).length, f.memoryText).toBeGreaterThanOrEqual(6);
          else expect(f.memoryText).toMatch(/\bv?\d+\.\d+.* (released|is out|published)/i);
        }
      });

      it('never tags the noun of an idiom the fact only uses as one ("of course" is not about a course)', () => {
        const idioms = ['of course', 'in fact', 'at least', 'by default', 'for example'];
        let seen = 0;
        for (const f of runs.flatMap((r) => r.facts))
          for (const idiom of idioms) {
            const noun = idiom.split(' ')[1]!;
            const text = f.memoryText.toLowerCase();
            if (!text.includes(idiom) || text.replaceAll(idiom, '').includes(noun)) continue;
            seen++;
            expect(f.topicTags, f.memoryText).not.toContain(noun);
          }
        if (name === 'clojurians') expect(seen).toBeGreaterThan(20); // the test reads real uses
      });

      it('never tags an adjective or adverb the lexicon lacks ("pretty sure", "it is possible")', () => {
        const words = ['pretty', 'possible', 'different', 'similar', 'current'];
        for (const f of runs.flatMap((r) => r.facts))
          for (const w of words) expect(f.topicTags, f.memoryText).not.toContain(w);
      });

      it('is deterministic: the same input gives the same facts and ids', () => {
        for (const { input, facts } of runs.slice(0, 400)) expect(extractor.extractSync(input)).toEqual(facts);
      });
    });
  }
});

describe('selectFacts', () => {
  it('drops facts under the threshold and keeps order', async () => {
    const facts = [0.9, 0.2, 0.5, 0.49].map((qualityScore, i) => ({ qualityScore, memoryText: `f${i}` }) as Fact);
    expect(selectFacts(facts, 0.5).map((f) => f.memoryText)).toEqual(['f0', 'f2']);
  });
});
