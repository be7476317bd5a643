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
    ['I guess so, but I also try hard', 'Alice guesses so, but Alice also tries hard'],
    ["I've released it; my fork stays", "Alice has released it; Alice's fork stays"],
    ["we've moved to deps.edn and we're happy", 'Alice and team have moved to deps.edn and Alice and team are happy'],
    ['I dont know, I recently dove in', "Alice doesn't know, Alice recently dove in"],
    ['i.e. nothing changes', 'i.e. nothing changes'],
    // Code is left alone: symbols, keywords, identifiers and backtick spans.
    [
      "I ran (require 'my-namespace :reload-all) on my laptop",
      "Alice ran (require 'my-namespace :reload-all) on Alice's laptop",
    ],
    ['we read :my/key and my_var from our.core', 'Alice and team read :my/key and my_var from our.core'],
    ['my fix: `(let [me 1 my 2] (+ me my))`', "Alice's fix: `(let [me 1 my 2] (+ me my))`"],
  ])('%s → %s', (input, output) => {
    expect(resolvePronouns(input, 'Alice')).toBe(output);
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
