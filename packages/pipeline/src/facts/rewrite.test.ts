import { describe, expect, it } from 'vitest';
import { classify } from './classify.js';
import { buildMemoryText, resolvePronouns, stripOpeners, thirdPerson } from './rewrite.js';

const build = (sentence: string, thread: { rootText: string; rootAuthorName: string } | null = null) =>
  buildMemoryText({
    sentence,
    cls: classify(sentence),
    author: 'Alice',
    thread: thread ? { ...thread, rootId: 'r1' } : null,
    isReply: thread !== null,
    mentions: ['Bob Smith'],
  });

describe('resolvePronouns', () => {
  it.each([
    ["I'll upgrade to 1.9", 'Alice will upgrade to 1.9'],
    ['I think it works', 'Alice thinks it works'],
    ['I guess so, but I also try hard', 'Alice guesses so, but they also try hard'],
    ["I've released it; my fork stays", 'Alice has released it; their fork stays'],
    ["we've moved to deps.edn and we're happy", "Alice and team have moved to deps.edn and they're happy"],
    ['I dont know, I recently dove in', "Alice doesn't know, they recently dove in"],
    ['i.e. nothing changes', 'i.e. nothing changes'],
    // Code is left alone: symbols, keywords, identifiers and backtick spans.
    [
      "I ran (require 'my-namespace :reload-all) on my laptop",
      "Alice ran (require 'my-namespace :reload-all) on their laptop",
    ],
    ['we read :my/key and my_var from our.core', 'Alice and team read :my/key and my_var from our.core'],
    ['my fix: `(let [me 1 my 2] (+ me my))`', "Alice's fix: `(let [me 1 my 2] (+ me my))`"],
  ])('%s → %s', (input, output) => {
    expect(resolvePronouns(input, 'Alice')).toBe(output);
  });

  it.each([
    // named once: later first person reads as singular "they"
    [
      'I guess I discovered how to use mapcat - I replaced my concat call',
      'Alice guesses they discovered how to use mapcat - they replaced their concat call',
    ],
    ["I'm sure I was wrong and I'm sorry", "Alice is sure they were wrong and they're sorry"],
    ['give me a ping and I will help myself', 'give Alice a ping and they will help themselves'],
    // "we" once as "Alice and team", then "they"; "our" as "the" until someone is named
    [
      'we fixed it in our next release and we will ship it',
      'Alice and team fixed it in their next release and they will ship it',
    ],
    ['it is fixed in our new release', 'it is fixed in the new release'],
    ['our team fixed it today', "Alice's team fixed it today"],
    ['by sharing our stories we can help', 'by sharing their stories Alice and team can help'],
    ['we use both, but I think they are fussy', 'Alice and team use both, but Alice thinks they are fussy'],
    // question word order keeps the base form; quoted speech is left as written
    ['so can I use it or can I not', 'so can Alice use it or can they not'],
    ['Slack says "we are no longer able to" and I agree', 'Slack says "we are no longer able to" and Alice agrees'],
  ])('names the author once: %s → %s', (input, output) => {
    expect(resolvePronouns(input, 'Alice')).toBe(output);
  });

  it('names the author at most once in any first-person text (property)', () => {
    const words = ['I', 'my', 'me', 'myself', "I'm", "I've", 'I think', 'we', 'our', "we're"];
    const filler = ['the build', 'works', 'and', 'so', 'with', 'today', 'because'];
    for (let n = 0; n < 200; n++) {
      const parts: string[] = [];
      for (let k = 0; k < 6; k++) parts.push(words[(n * 7 + k * 3) % words.length]!, filler[(n + k) % filler.length]!);
      const out = resolvePronouns(parts.join(' '), 'Alice');
      expect(out.match(/\bAlice\b(?! and team)/g)?.length ?? 0, out).toBeLessThanOrEqual(1);
      expect(out.match(/\bAlice and team\b/g)?.length ?? 0, out).toBeLessThanOrEqual(1);
    }
  });

  it('conjugates known verbs only', () => {
    expect([
      thirdPerson('try'),
      thirdPerson('push'),
      thirdPerson('have'),
      thirdPerson('was'),
      thirdPerson('learnt'),
    ]).toEqual(['tries', 'pushes', 'has', 'was', 'learnt']);
  });
});

describe('stripOpeners', () => {
  it('drops greetings, fillers and leading addressees (multi-word names included)', () => {
    expect(stripOpeners('Hey @Bob Smith, thanks! so the fix is in 1.2', ['Bob Smith'])).toEqual({
      text: 'the fix is in 1.2',
      addressees: ['Bob Smith'],
    });
  });

  it('keeps words that only look like openers', () => {
    expect(stripOpeners('no-history attrs are cheap').text).toBe('no-history attrs are cheap');
    expect(stripOpeners('well documented libraries win').text).toBe('well documented libraries win');
    expect(stripOpeners('great  we will fork now').text).toBe('we will fork now');
    expect(stripOpeners("@Bob Smith's repo is all CLJC", ['Bob Smith']).text).toBe("@Bob Smith's repo is all CLJC");
  });
});

describe('buildMemoryText', () => {
  it('makes first-person statements self-contained', () => {
    expect(build("I'll upgrade the staging cluster to 1.9 by Friday")).toBe(
      'Alice will upgrade the staging cluster to 1.9 by Friday.',
    );
  });

  it('puts the author back where chat dropped the "I"', () => {
    expect(build('Just started aerial yoga classes last week.')).toBe(
      'Alice just started aerial yoga classes last week.',
    );
    expect(build('Been busy volunteering at the shelter lately')).toBe(
      'Alice has been busy volunteering at the shelter lately.',
    );
    expect(build("Can't wait for tomorrow's grand opening!")).toBe("Alice can't wait for tomorrow's grand opening!");
    expect(build('Looking forward to the conference next week')).toBe(
      'Alice is looking forward to the conference next week.',
    );
    expect(build('Reading books is fun')).toBe('Reading books is fun.');
  });

  it("keeps the speaker's words where they stand alone", () => {
    expect(build('Built something I will actually keep using myself!')).toBe(
      'Alice built something they will actually keep using themselves!',
    );
    expect(build('Will try it out soon, had the same issue as Bob I guess, but now I copy by hand')).toBe(
      'Alice will try it out soon, had the same issue as Bob, but now they copy by hand.',
    );
    expect(build('Just added a cache layer and trying to tune it')).toBe(
      'Alice just added a cache layer and trying to tune it.',
    );
    expect(build('yea, I will believe it when the tests pass on CI')).toBe(
      'Alice will believe it when the tests pass on CI.',
    );
    expect(build('Fixed in 1.2 by the upstream patch')).toBe('Fixed in 1.2 by the upstream patch.');
    expect(build('The JVM is getting better all the time')).toBe('The JVM is getting better all the time.');
  });

  it('attributes questions and requests', () => {
    expect(build('how do I close a core.async channel?')).toBe('Alice asked: "how do I close a core.async channel?"');
    expect(build('@Bob Smith can you review the PR by Friday?')).toBe(
      'Alice asked @Bob Smith to review the PR by Friday.',
    );
  });

  it('attributes unattributed opinions', () => {
    expect(build('re-frame is much better than plain reagent atoms for this')).toBe(
      'Alice thinks re-frame is much better than plain reagent atoms for this.',
    );
  });

  it('adds thread context to a short or anaphoric reply', () => {
    const root = { rootText: 'How do I run background jobs in Clojure?', rootAuthorName: 'Bob' };
    expect(build('yes, use core.async for that', root)).toBe(
      'Use core.async for that (in reply to Bob: "How do I run background jobs in Clojure?")',
    );
  });
});
