import { describe, expect, it } from 'vitest';
import { CLOJURIANS, discordInputs, ETHGLOBAL, SlackExport } from '../test-support.js';
import type { ExtractionInput } from './port.js';
import { preprocess, summarizeThreadContext } from './preprocess.js';

const slack = new SlackExport(CLOJURIANS, 'clojurians');
const real = (channel: string, day: string, ts: string): ExtractionInput => {
  const found = slack.inputs(channel, [day]).find((i) => i.message.platformMessageId === ts);
  if (!found) throw new Error(`no message ${channel}/${day}/${ts}`);
  return found;
};
const withText = (text: string, mentions: Array<{ id: string; name: string }> = []) => ({
  ...real('beginners', '2018-02-02', '1517587160.000235').message,
  text,
  mentions,
});

describe('preprocess: Slack markup on real messages', () => {
  it('renders a mention, a labelled link, an entity and inline code (datomic 2018-02-09)', () => {
    const p = preprocess(real('datomic', '2018-02-09', '1518185786.000444').message);
    expect(p.text).toMatch(
      /^@\S+ You can also go to http:\/\/my\.datomic\.com -> log in -> Suggest features and upvote/,
    );
    expect(p.links).toEqual(['http://my.datomic.com']);
    expect(p.inlineCode).toEqual(['Suggest features']);
    expect(p.mentions).toHaveLength(1);
    expect(p.text).not.toMatch(/[<>]@|&gt;|`/);
    expect(p.lang).toBe('en');
  });

  it('keeps fenced code apart and leaves a [code] placeholder (boot 2018-02-08)', () => {
    const p = preprocess(real('boot', '2018-02-08', '1518093522.000034').message);
    expect(p.codeBlocks).toEqual(['(deftask my-repl\n  []\n  (env/def FOO "1")\n  (repl))']);
    expect(p.inlineCode).toContain('(get (env/env) "FOO")');
    expect(p.text.split('\n')).toContain('[code]');
    expect(p.text).toContain('In the REPL I can do (get (env/env) "FOO") and get "1"');
    expect(p.isQuestion).toBe(true);
  });

  it('renders channel links as #name (architecture 2018-02-05)', () => {
    const p = preprocess(real('architecture', '2018-02-05', '1517862914.000329').message);
    expect(p.text).toBe(
      'Perhaps a better question for #sql than #architecture ? Are you referring to https://docs.oracle.com/javase/8/docs/api/java/sql/JDBCType.html',
    );
    expect(p.links).toEqual(['https://docs.oracle.com/javase/8/docs/api/java/sql/JDBCType.html']);
  });

  it('detects Cyrillic, Han and Italian text (clojure-russia, clojure-china, clojure-italy)', () => {
    expect(preprocess(real('clojure-russia', '2018-02-02', '1517603096.000130').message).lang).toBe('ru');
    expect(preprocess(real('clojure-china', '2018-02-05', '1517840473.000430').message).lang).toBe('zh');
    expect(preprocess(real('clojure-italy', '2018-02-01', '1517475501.000106').message).lang).toBe('it');
  });
});

describe('preprocess: markup rules', () => {
  it('resolves <@U1> through message.mentions and <@U1|name> through its label', () => {
    const p = preprocess(withText('<@U1> and <@U2|bob> see <!here>', [{ id: 'U1', name: 'Alice' }]));
    expect(p.text).toBe('@Alice and @bob see @here');
    expect(p.mentions).toEqual(['Alice', 'bob']);
  });

  it('renders a link label as `label (url)` and a label that repeats the URL as the URL', () => {
    const p = preprocess(withText('see <https://x.dev/a|the docs> or <https://y.dev/b|y.dev/b>'));
    expect(p.text).toBe('see the docs (https://x.dev/a) or https://y.dev/b');
    expect(p.links).toEqual(['https://x.dev/a', 'https://y.dev/b']);
  });

  it('strips Slack and Discord emphasis, spoilers, custom emoji and :codes:, but not snake_case', () => {
    const p = preprocess(withText('*bold* _it_ ~gone~ **b** __u__ ||secret|| <:pepe:123> :wave: keep_this_name 🎉'));
    expect(p.text).toBe('bold it gone b u secret keep_this_name');
  });

  it('unescapes entities after markup, so &lt;x&gt; is text and not a link', () => {
    expect(preprocess(withText('a &lt;b&gt; &amp; c')).text).toBe('a <b> & c');
  });

  it('counts words and flags questions', () => {
    const p = preprocess(withText('How do I use `core.async` here?'));
    expect(p).toMatchObject({ isQuestion: true, wordCount: 6, inlineCode: ['core.async'] });
  });
});

describe('summarizeThreadContext', () => {
  const msg = real('beginners', '2018-02-02', '1517587160.000235').message;

  it('is empty for a top-level message and for the root itself', () => {
    expect(summarizeThreadContext(null, msg)).toBe('');
    const root = { rootText: 'x', rootAuthorName: 'A', rootId: msg.platformMessageId };
    expect(summarizeThreadContext(root, msg)).toBe('');
  });

  it('quotes the root author and text within 160 characters', () => {
    const long = `How do we deploy ${'a very long question '.repeat(20)}`;
    const s = summarizeThreadContext({ rootText: long, rootAuthorName: 'Alice', rootId: '1' }, msg);
    expect(s.startsWith('Reply to Alice: "How do we deploy')).toBe(true);
    expect(s.length).toBeLessThanOrEqual(160);
    expect(s.endsWith('…"')).toBe(true);
  });

  it('summarises a real Discord reply with the message it answers', () => {
    const reply = discordInputs(ETHGLOBAL).find((i) => i.thread !== null)!;
    const s = summarizeThreadContext(reply.thread, reply.message);
    expect(s).toMatch(/^Reply to .+: ".+"$/);
  });
});
