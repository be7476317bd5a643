import type { AskSource } from './types.js';

/**
 * An ask source for unit tests: fact `f<n>` by ana in #general (channel C1) on 2024-03-05, from message `m<n>`, with
 * its citation `[n]` (excerpt: the text's first 100 characters, permalink `https://example.test/<n>`).
 */
export const askSource = (n: number, text: string, opts: { score?: number; topic?: string } = {}): AskSource => ({
  n,
  score: opts.score ?? 1,
  fact: {
    id: `f${n}`,
    memory_text: text,
    author_name: 'ana',
    message_ts: '2024-03-05T10:00:00.000Z',
    channel_id: 'C1',
    topic_tags: [opts.topic ?? 'clojure'],
    fact_type: 'observation',
    source_message_id: `m${n}`,
  },
  citation: {
    id: `[${n}]`,
    author: 'ana',
    channel: 'general',
    timestamp: '2024-03-05T10:00:00.000Z',
    text_excerpt: text.slice(0, 100),
    permalink: `https://example.test/${n}`,
    source_message_id: `m${n}`,
    media_type: null,
    media_name: null,
  },
});
