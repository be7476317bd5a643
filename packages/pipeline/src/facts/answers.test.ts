import path from 'node:path';
import type { MessageIngested } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { loadLocomo } from '../locomo.js';
import { ANSWER_WINDOW_MS, answeredQuestion } from './answers.js';

const set = loadLocomo(path.resolve(import.meta.dirname, '../../../../../shared/data/locomo/locomo-dev.json'));
/** A real top-level LoCoMo turn with `text`, re-dated to epoch second `sec` (`extra` overrides the rest). */
const turnAt = (sec: number, text: string, extra: Partial<MessageIngested> = {}) => ({
  ...set.messages[0]!,
  text,
  timestamp: new Date(sec * 1000).toISOString(),
  ...extra,
});

describe('answeredQuestion', () => {
  it('takes a question, not a link with a query string or a statement', () => {
    const ch = 'C1';
    const m = turnAt(1_700_000_060, 'Yes, that works.', { author: { id: 'U2', name: 'bob', isBot: false } });
    const tail = (text: string, sec = 1_700_000_000) => ({
      channelId: ch,
      messageId: `${sec}.000100`,
      messageTs: new Date(sec * 1000).toISOString(),
      text,
      authorName: 'alice',
    });
    expect(answeredQuestion(m, tail('does `lein run` pick it up?'))?.rootAuthorName).toBe('alice');
    expect(answeredQuestion(m, tail('Does it? (asking for a friend)'))?.rootAuthorName).toBe('alice');
    expect(answeredQuestion(m, tail('see https://example.com/search?q=atlas for it'))).toBeNull();
    expect(answeredQuestion(m, tail('We shipped it.'))).toBeNull();
    expect(answeredQuestion(m, undefined)).toBeNull();
    expect(answeredQuestion({ ...m, threadTs: '1700000000.000100' }, tail('Does it work?'))).toBeNull();
    expect(answeredQuestion({ ...m, subtype: 'channel_join' }, tail('Does it work?'))).toBeNull();
  });

  it("takes only another author's question of at most ANSWER_WINDOW_MS before", () => {
    const m = turnAt(1_700_000_000 + ANSWER_WINDOW_MS / 1000, 'Yes.', {
      author: { id: 'U2', name: 'bob', isBot: false },
    });
    const asked = (sec: number, authorName = 'alice') => ({
      messageId: `${sec}.000100`,
      messageTs: new Date(sec * 1000).toISOString(),
      text: 'Does it work?',
      authorName,
    });
    expect(answeredQuestion(m, asked(1_700_000_000))).toEqual({
      rootText: 'Does it work?',
      rootAuthorName: 'alice',
      rootId: '1700000000.000100',
    });
    expect(answeredQuestion(m, asked(1_699_999_999))).toBeNull();
    expect(answeredQuestion(m, asked(1_700_000_000, 'bob'))).toBeNull();
  });
});
