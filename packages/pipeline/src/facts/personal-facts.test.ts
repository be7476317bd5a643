import path from 'node:path';
import type { Fact } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { loadLocomo } from '../locomo.js';
import { OfflineFactExtractor } from './offline-extractor.js';
import { selectFacts } from './select.js';

const set = loadLocomo(path.resolve(import.meta.dirname, '../../../../../shared/data/locomo/locomo-dev.json'));
const turn = (text: string) => set.messages.find((m) => m.text.startsWith(text))!;
const extractor = new OfflineFactExtractor();
const kept = async (text: string) => selectFacts(await extractor.extract({ message: turn(text), thread: null }), 0.5);

describe('personal facts (first-person events and states, real LoCoMo turns)', () => {
  it('keeps a dated personal event, attributed to the speaker', async () => {
    const facts = await kept('Yeah, I painted that lake sunrise last year!');
    expect(facts.map((f) => f.memoryText).join(' ')).toMatch(/Melanie painted that lake sunrise last year/);
  });

  it('keeps plans and states about the speaker’s life', async () => {
    expect((await kept("I'm keen on counseling or working in mental health")).length).toBeGreaterThan(0);
    expect(
      (await kept('Thanks, Melanie! This necklace is super special to me')).map((f) => f.memoryText).join(' '),
    ).toMatch(/Sweden/);
  });

  it('keeps a short statement of a pastime or possession, and an experience ("I had an interview …")', async () => {
    expect((await kept('Yeah, I play clarinet!')).map((f) => f.memoryText).join(' ')).toMatch(/Melanie plays clarinet/);
    expect(
      (await kept('Thanks! Really appreciate you keeping me in the loop')).map((f) => f.memoryText).join(' '),
    ).toMatch(/Gina had an interview for a design internship yesterday/);
  });

  it('reads a statement closed by a tag question ("…, eh?") as a statement', async () => {
    const facts = await kept('Hey Mel, long time no chat! I had a wicked day out with the gang');
    expect(facts.map((f) => `${f.factType}: ${f.memoryText}`).join(' ')).toMatch(
      /observation: Caroline had a wicked day/,
    );
  });

  /** Extracts the LoCoMo turn starting with `said` as the answer to the turn just before it. */
  const answering = async (said: string) => {
    const message = turn(said);
    const asked = set.messages[set.messages.indexOf(message) - 1]!;
    const answers = { rootText: asked.text, rootAuthorName: asked.author.name, rootId: asked.platformMessageId };
    return {
      answered: await extractor.extract({ message, thread: null, answers }),
      alone: await extractor.extract({ message, thread: null }),
    };
  };

  it('keeps an answer to the question just before it, with the question where the answer needs it', async () => {
    // conv-41 D24:8 after "Looks fun! What games did you all play?", D1:12 after "How did the extra funding help …?"
    const games = await answering('Some fun ones like charades');
    expect(selectFacts(games.alone, 0.5)).toEqual([]);
    expect(selectFacts(games.answered, 0.5).map((f) => f.memoryText)).toEqual([
      'Some fun ones like charades and a scavenger hunt.',
    ]);
    const funding = await answering('It enabled needed repairs');
    expect(selectFacts(funding.alone, 0.5)).toEqual([]);
    expect(selectFacts(funding.answered, 0.5).map((f) => f.memoryText)).toEqual([
      'It enabled needed repairs and renovations, making the learning environment safer and more modern for students (in reply to Maria: "Looks good! How did the extra funding help with building the school?")',
    ]);
    // Still nothing from a reply without content words enough to stand: "They were awestruck and humbled."
    expect(selectFacts((await answering('They were awestruck and humbled.')).answered, 0.5)).toEqual([]);
  });

  it('gives no answer bonus to a question asked back', async () => {
    // conv-41 D1:7 "Woohoo, John! That's awesome! Any specific areas you want to tackle?" after John's plans.
    const back = await answering("Woohoo, John! That's awesome! Any specific areas");
    const questions = (fs: Fact[]) => fs.filter((f) => f.factType === 'question').map((f) => f.qualityScore);
    expect(questions(back.answered).length).toBeGreaterThan(0);
    expect(questions(back.answered)).toEqual(questions(back.alone));
  });

  it('still drops pleasantries without a fact', async () => {
    expect(await kept('Hey Mel! Good to see you! How have you been?')).toEqual([]);
  });
});
