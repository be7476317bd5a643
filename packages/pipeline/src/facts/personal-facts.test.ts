import path from 'node:path';
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

  it('still drops pleasantries without a fact', async () => {
    expect(await kept('Hey Mel! Good to see you! How have you been?')).toEqual([]);
  });
});
