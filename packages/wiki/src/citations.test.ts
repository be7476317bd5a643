import { describe, expect, it } from 'vitest';
import {
  bestExcerpt,
  citationFor,
  EXCERPT_MAX_CHARS,
  normalizeMessageText,
  renderMarkup,
  verifyCitation,
} from './citations.js';
import type { SourceMessage, WikiFact } from './types.js';

const message = (over: Partial<SourceMessage> = {}): SourceMessage => ({
  id: '1778617595.072469',
  channel_id: 'C1',
  channel_name: 'help',
  author: 'Daniel',
  timestamp: '2026-05-12T20:26:35.072Z',
  text:
    'also the delete was not performed correctly (in the source the _id was deleted from the collection), while in Iceberg i have 2 entries.\n' +
    'the `_id` is the primary key in mongo &amp; <@U0A9HSU0MNZ> said so, see <https://olake.io/docs|the docs>',
  permalink: 'https://x.slack.com/archives/C1/p1778617595072469',
  attachments: [],
  ...over,
});

const fact = (over: Partial<WikiFact> = {}): WikiFact => ({
  id: 'f1',
  channel_id: 'C1',
  memory_text: 'The _id is the primary key in Mongo.',
  quality_score: 0.8,
  importance: 'medium',
  fact_type: 'observation',
  topic_tags: ['mongo'],
  entity_tags: ['MongoDB'],
  author_name: 'Daniel',
  message_ts: '2026-05-12T20:26:35.072Z',
  source_message_id: '1778617595.072469',
  permalink: 'https://x.slack.com/archives/C1/p1778617595072469',
  superseded_by: null,
  ...over,
});

describe('renderMarkup', () => {
  it('renders workplace-chat markup readably', () => {
    const names = new Map([['U1', 'Ann']]);
    expect(renderMarkup('hi <@U1> and <@U2|bob> in <#C9|general> <!here>', { userNames: names })).toBe(
      'hi @Ann and @bob in #general @here',
    );
    expect(renderMarkup('<@U2>')).toBe('@U2');
    expect(renderMarkup('see <http://x.io/a|the docs> or <https://y.io> or <mailto:a@b.c|a@b.c>')).toBe(
      'see the docs or https://y.io or a@b.c',
    );
    expect(renderMarkup('<!subteam^S1|@devs> a &lt;b&gt; &amp; `code` ```block```')).toBe('@devs a <b> & code block');
  });
  it('renders community-chat markup readably', () => {
    expect(renderMarkup('<@!42> <@&7> <#99> <:party:123> <a:wave:5> <t:0:R>')).toBe(
      '@42 @7 #99 :party: :wave: 1970-01-01T00:00:00.000Z',
    );
  });
});

describe('citationFor', () => {
  it('cites the sentence of the source message that supports the fact, with the message metadata', () => {
    const c = citationFor(3, fact(), message())!;
    expect(c).toEqual({
      id: '[3]',
      author: 'Daniel',
      channel: 'help',
      timestamp: '2026-05-12T20:26:35.072Z',
      text_excerpt: 'the _id is the primary key in mongo & @U0A9HSU0MNZ said so, see the docs',
      permalink: 'https://x.slack.com/archives/C1/p1778617595072469',
      media_type: null,
      media_name: null,
    });
    // Taken from the message, not from the rewritten fact.
    expect(c.text_excerpt).not.toContain('The _id is the primary key in Mongo.');
    expect(verifyCitation(c, message())).toBe(true);
  });

  it('uses user names for mentions and the first attachment as media', () => {
    const names = new Map([['U0A9HSU0MNZ', 'Vaibhav Verma']]);
    const msg = message({ attachments: [{ name: 'shot.png', media_type: 'image' }] });
    const c = citationFor(1, fact({ memory_text: 'Vaibhav Verma said the _id is the primary key' }), msg, {
      userNames: names,
    })!;
    expect(c.text_excerpt).toContain('@Vaibhav Verma said so');
    expect(c.media_type).toBe('image');
    expect(c.media_name).toBe('shot.png');
    expect(verifyCitation(c, msg, { userNames: names })).toBe(true);
  });

  it('cuts a long sentence to its best window of at most ~200 characters, marking the cut', () => {
    const long = `${'lorem ipsum dolor sit amet '.repeat(20)}the kafka connector restarts every night at two ${'consectetur adipiscing elit '.repeat(20)}`;
    const msg = message({ text: long });
    const c = citationFor(1, fact({ memory_text: 'The Kafka connector restarts every night.' }), msg)!;
    expect(c.text_excerpt).toContain('kafka connector restarts every night');
    expect(c.text_excerpt.replace(/…/g, '').length).toBeLessThanOrEqual(EXCERPT_MAX_CHARS);
    expect(c.text_excerpt.startsWith('…')).toBe(true);
    expect(verifyCitation(c, msg)).toBe(true);
  });

  it('returns null when the message does not support the fact or is not its source', () => {
    expect(citationFor(1, fact({ memory_text: 'Zebras graze quietly.' }), message())).toBeNull();
    expect(citationFor(1, fact(), message({ id: 'other' }))).toBeNull();
    expect(bestExcerpt(fact(), { text: '' })).toBeNull();
  });
});

describe('verifyCitation', () => {
  const good = () => citationFor(1, fact(), message())!;
  it('rejects a forged or paraphrased excerpt', () => {
    expect(verifyCitation({ ...good(), text_excerpt: 'The _id is the primary key in Mongo.' }, message())).toBe(false);
    expect(verifyCitation({ ...good(), text_excerpt: 'the _id is NOT the primary key in mongo' }, message())).toBe(
      false,
    );
    expect(verifyCitation({ ...good(), text_excerpt: '' }, message())).toBe(false);
    expect(verifyCitation({ ...good(), text_excerpt: '……' }, message())).toBe(false);
  });
  it('rejects a citation whose author, timestamp, channel or permalink does not match', () => {
    expect(verifyCitation({ ...good(), author: 'Mallory' }, message())).toBe(false);
    expect(verifyCitation({ ...good(), timestamp: '2026-05-12T20:26:36.000Z' }, message())).toBe(false);
    expect(verifyCitation({ ...good(), permalink: 'https://evil.example/p1' }, message())).toBe(false);
    expect(verifyCitation({ ...good(), channel: 'random' }, message())).toBe(false);
  });
  it('normalises whitespace and markup on both sides', () => {
    const c = good();
    expect(verifyCitation({ ...c, text_excerpt: '  the _id is the   primary\nkey in mongo  ' }, message())).toBe(true);
    // Raw platform markup in an excerpt is rendered before comparing.
    expect(
      verifyCitation({ ...c, text_excerpt: 'the `_id` is the primary key in mongo &amp; <@U0A9HSU0MNZ>' }, message()),
    ).toBe(true);
    expect(verifyCitation({ ...c, text_excerpt: 'see the docs' }, message())).toBe(true);
    expect(verifyCitation({ ...c, text_excerpt: '…primary key in mongo…' }, message())).toBe(true);
    expect(normalizeMessageText('a\n\n  b <http://x|c>')).toBe('a b c');
    // Same instant in another ISO spelling.
    expect(verifyCitation({ ...c, timestamp: '2026-05-12T20:26:35.072+00:00' }, message())).toBe(true);
  });
});
