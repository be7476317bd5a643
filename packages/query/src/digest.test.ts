import { describe, expect, it } from 'vitest';
import { composeDigest, type DigestSourceItem, type DigestTransition } from './digest.js';

const tr = (from: string | null, to: string, at: string, id: string): DigestTransition => ({
  from,
  to,
  at,
  evidence: { messageId: id, platformMessageId: id, permalink: `https://x/${id}`, authorName: `a-${id}`, excerpt: id },
});
const item = (p: Partial<DigestSourceItem> & Pick<DigestSourceItem, 'itemId' | 'kind' | 'transitions'>) =>
  ({ state: p.transitions.at(-1)!.to, title: p.itemId, owner: null, dueDate: null, ...p }) as DigestSourceItem;

const START = '2018-02-12T00:00:00.000Z';
const END = '2018-02-19T00:00:00.000Z';

describe('composeDigest', () => {
  const items: DigestSourceItem[] = [
    // decided before, superseded in the period
    item({
      itemId: 'old',
      kind: 'decision',
      transitions: [
        tr(null, 'decided', '2018-02-01T10:00:00.000Z', 'm1'),
        tr('decided', 'superseded', '2018-02-13T09:00:00.000Z', 'm5'),
      ],
    }),
    // proposed and agreed in the period
    item({
      itemId: 'new',
      kind: 'decision',
      owner: 'seancorfield',
      transitions: [
        tr(null, 'proposed', '2018-02-13T08:00:00.000Z', 'm4'),
        tr('proposed', 'decided', '2018-02-13T09:00:00.000Z', 'm5'),
      ],
    }),
    // decided after the period: not in it, nor its state
    item({ itemId: 'later', kind: 'decision', transitions: [tr(null, 'decided', '2018-02-20T00:00:00.000Z', 'm9')] }),
    // an action item opened in the period, due in 3 days
    item({
      itemId: 'todo',
      kind: 'action_item',
      dueDate: '2018-02-21',
      transitions: [tr(null, 'open', '2018-02-14T00:00:00.000Z', 'm6')],
    }),
    // open before, overdue at the end
    item({
      itemId: 'late',
      kind: 'action_item',
      dueDate: '2018-02-15',
      transitions: [tr(null, 'open', '2018-02-02T00:00:00.000Z', 'm2')],
    }),
    // opened before, done in the period; done after the end does not count
    item({
      itemId: 'shipped',
      kind: 'action_item',
      transitions: [
        tr(null, 'open', '2018-02-03T00:00:00.000Z', 'm3'),
        tr('open', 'done', '2018-02-18T23:59:59.000Z', 'm7'),
      ],
    }),
    item({
      itemId: 'after',
      kind: 'action_item',
      dueDate: '2018-02-10',
      transitions: [
        tr(null, 'open', '2018-02-03T00:00:00.000Z', 'm8'),
        tr('open', 'done', '2018-02-19T00:00:00.000Z', 'm10'),
      ],
    }),
  ];
  const topics = [
    { tag: 'spec', count: 6, previous: 2, firstSeen: '2018-01-20T00:00:00.000Z' },
    { tag: 'deps.edn', count: 4, previous: 0, firstSeen: '2018-02-14T00:00:00.000Z' },
    { tag: 'repl', count: 3, previous: 3, firstSeen: '2018-01-01T00:00:00.000Z' },
    { tag: 'rare', count: 2, previous: 0, firstSeen: '2018-01-01T00:00:00.000Z' },
  ];
  const d = composeDigest({ channelId: 'C1', channelName: 'clojure', start: START, end: END, items, topics });

  it('decisions made and changed in the period, in the state they had at its end', () => {
    expect(d.decisions.made.map((e) => [e.item_id, e.state, e.previous_state])).toEqual([['new', 'decided', null]]);
    expect(d.decisions.changed.map((e) => [e.item_id, e.state, e.previous_state])).toEqual([
      ['old', 'superseded', 'decided'],
    ]);
  });

  it('action items opened, closed, due and overdue', () => {
    expect(d.action_items.opened.map((e) => e.item_id)).toEqual(['todo']);
    expect(d.action_items.closed.map((e) => [e.item_id, e.state])).toEqual([['shipped', 'done']]);
    expect(d.action_items.due.map((e) => e.item_id)).toEqual(['todo']);
    // 'after' was done only at the end instant: still open and overdue as of the period's end.
    expect(d.action_items.overdue.map((e) => e.item_id)).toEqual(['late', 'after']);
  });

  it('new and growing topics', () => {
    expect(d.topics.new).toEqual([{ topic: 'deps.edn', fact_count: 4 }]);
    expect(d.topics.growing).toEqual([{ topic: 'spec', fact_count: 6, previous_count: 2 }]);
  });

  it('one citation per message, numbered in the order the text quotes them', () => {
    expect(d.citations.map((c) => c.message_id)).toEqual(['m4', 'm5', 'm6', 'm7', 'm2', 'm8']);
    expect(d.decisions.made[0]!.citation).toBe(1); // m4, its proposal
    expect(d.decisions.changed[0]!.citation).toBe(2);
    expect(d.action_items.due[0]!.citation).toBe(3); // m6 again: one number per message
    expect(d.text).toContain('**Digest of #clojure, 2018-02-12 to 2018-02-18**');
    expect(d.text).toContain('- old: decided → superseded [2]');
    expect(d.text).toContain('*New topics*: deps.edn (4)');
    expect(d.text).toContain('[1] a-m4, 2018-02-13: https://x/m4');
    expect(d.has_activity).toBe(true);
  });

  it('a quiet period says so', () => {
    const quiet = composeDigest({
      channelId: 'C1',
      start: '2019-01-01T00:00:00.000Z',
      end: '2019-01-08T00:00:00.000Z',
      items: [],
      topics: [],
    });
    expect(quiet.has_activity).toBe(false);
    expect(quiet.text).toMatch(/No decision, action item or new topic in this period\.$/);
    expect(quiet.period.days).toBe(7);
  });
});
