import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { LifecycleItem } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { CLOJURIANS, exportLifecycle, type LifecycleLabel, OLAKE, scoreLifecycle } from './bench.js';
import { dueDateOf, isProposal, messageCues } from './cues.js';
import { deriveLifecycle, type LifecycleFact, type LifecycleSignal, ownerOf } from './derive.js';

const LABELS = path.resolve(import.meta.dirname, '../../../../test/fixtures/lifecycle-labels.json');
const labels = (JSON.parse(readFileSync(LABELS, 'utf8')) as { labels: LifecycleLabel[] }).labels;

/** The item of `kind` opened by the message `ts` of channel `name`. */
const itemAt = (channels: ReturnType<typeof exportLifecycle>, name: string, ts: string, kind: string) =>
  channels.find((c) => c.name === name)?.items.find((i) => i.source.platformMessageId === ts && i.kind === kind);

const last = (i: LifecycleItem | undefined) => i?.transitions.at(-1);

describe('lifecycle on the OLake export (real chat)', () => {
  const channels = exportLifecycle(OLAKE, 'olake');

  it('closes an action item by the reply that says it shipped, citing that reply', () => {
    // #help: "we'll add a quick fix to support numbers in the Catalog Name field" → "fixed in our new release"
    const item = itemAt(channels, 'help', '1783940673.563389', 'action_item');
    expect(item?.state).toBe('done');
    expect(last(item)).toMatchObject({ from: 'open', to: 'done', rule: 'done' });
    expect(last(item)!.evidence.platformMessageId).toBe('1784003552.959999');
    expect(last(item)!.evidence.permalink).toMatch(/^https:\/\/olake\.slack\.com\/archives\/.+\/p1784003552959999$/);
    expect(last(item)!.at).toBe(new Date(1784003552959).toISOString());
    // "can you share the corrupted parquet" → "sent it": done by the asked person's reply
    const shared = itemAt(channels, 'help', '1778938091.300499', 'action_item');
    expect(last(shared)).toMatchObject({ from: 'open', to: 'done' });
    expect(last(shared)!.evidence.platformMessageId).toBe('1778939658.053969');
  });

  it('supersedes a release decision by the later release in the same thread, citing it', () => {
    const item = itemAt(channels, 'help', '1778924125.387269', 'decision');
    expect(item?.state).toBe('superseded');
    expect(last(item)).toMatchObject({ from: 'decided', to: 'superseded', rule: 'superseded' });
    expect(last(item)!.evidence.platformMessageId).toBe('1780078079.162539');
    const by = itemAt(channels, 'help', '1780078079.162539', 'decision');
    expect(item!.supersededBy).toBe(by?.itemId);
  });

  it('leaves an action item nobody answered open, with its owner', () => {
    const item = itemAt(channels, 'help', '1780900593.704349', 'action_item');
    expect(item?.state).toBe('open');
    expect(item?.owner).toBe('Anh Nguyen Thach');
    expect(item?.transitions).toHaveLength(1);
  });
});

describe('lifecycle on Clojurians channels (real chat)', () => {
  const channels = exportLifecycle(CLOJURIANS, 'clojurians', ['beginners', 'boot', 'fulcro']);

  it('drops an action item on "never mind", citing the message', () => {
    const item = itemAt(channels, 'beginners', '1518147849.000115', 'action_item');
    expect(item?.state).toBe('dropped');
    expect(last(item)).toMatchObject({ from: 'open', to: 'dropped', rule: 'dropped' });
    expect(last(item)!.evidence.platformMessageId).toBe('1518148181.000013');
    expect(last(item)!.evidence.authorName).toBe('hawari');
  });

  it('supersedes boot-tools-deps 0.3.0 by the 0.4.1 release', () => {
    const item = itemAt(channels, 'boot', '1517602142.000476', 'decision');
    expect(last(item)).toMatchObject({ from: 'decided', to: 'superseded' });
    expect(last(item)!.evidence.platformMessageId).toBe('1517620662.000033');
    expect(itemAt(channels, 'boot', '1517620662.000033', 'decision')?.state).toBe('decided');
  });
});

describe('lifecycle benchmark labels (test/fixtures/lifecycle-labels.json)', () => {
  it('hold ids and states only, for both exports, with real state changes', () => {
    expect(labels.length).toBeGreaterThanOrEqual(40);
    for (const l of labels) {
      expect(Object.keys(l).sort()).toEqual(['channel', 'export', 'kind', 'moved_by', 'state', 'ts']);
      expect(l.ts).toMatch(/^\d{10}\.\d{6}$/);
    }
    const states = new Set(labels.map((l) => l.state));
    for (const s of ['decided', 'superseded', 'open', 'done', 'dropped']) expect(states).toContain(s);
    expect(new Set(labels.map((l) => l.export))).toEqual(new Set(['olake', 'clojurians']));
  });

  it('scores the OLake labels: every found item has a state, recall and accuracy as measured', () => {
    const s = scoreLifecycle(
      labels.filter((l) => l.export === 'olake'),
      exportLifecycle(OLAKE, 'olake'),
    );
    expect(s.labelled).toBe(labels.filter((l) => l.export === 'olake').length);
    expect(s.recall).toBeGreaterThan(0.8);
    expect(s.stateAccuracy).toBeGreaterThan(0.6);
  });
});

// The transitions the real exports do not show (no proposal is agreed, nothing is reverted): a synthetic channel.
const CH = 'CSYNTH';
let n = 0;
const msg = (ts: string, author = 'alice', text = '') => ({
  messageId: `00000000-0000-4000-8000-${String(++n).padStart(12, '0')}`,
  platformMessageId: ts,
  permalink: `https://acme.slack.com/archives/${CH}/p${ts.replace('.', '')}`,
  authorId: `U${author}`,
  authorName: author,
  excerpt: text,
});
const iso = (ts: string) => new Date(Number(ts) * 1000).toISOString();
const fact = (ts: string, factType: string, text: string, over: Partial<LifecycleFact> = {}): LifecycleFact => ({
  factId: `f-${ts}`,
  channelId: CH,
  factType,
  memoryText: text,
  actionTags: [],
  sourceText: text,
  messageTs: iso(ts),
  threadTs: null,
  message: msg(ts, 'alice', text),
  ...over,
});
const signal = (ts: string, text: string, threadTs: string | null, author = 'bob'): LifecycleSignal => ({
  channelId: CH,
  timestamp: iso(ts),
  threadTs,
  replyToId: null,
  cues: messageCues(text),
  message: msg(ts, author, text),
});

describe('deriveLifecycle (synthetic channel)', () => {
  it('moves a proposal to decided on "+1" in its thread, then to reverted when a later decision goes back', () => {
    const proposal = fact('1700000000.000100', 'decision', 'I propose we switch the queue to Kafka', {
      threadTs: '1700000000.000100',
    });
    const back = fact('1700090000.000100', 'decision', "Let's go back to RabbitMQ for the queue, Kafka was too much");
    const items = deriveLifecycle({
      facts: [back, proposal],
      signals: [signal('1700000100.000100', '+1 agreed, let us do it', '1700000000.000100')],
      supersessions: [{ factId: proposal.factId, supersededBy: back.factId, invalidAt: back.messageTs, certain: true }],
    });
    const p = items.find((i) => i.itemId === proposal.factId)!;
    expect(p.transitions.map((t) => [t.from, t.to])).toEqual([
      [null, 'proposed'],
      ['proposed', 'decided'],
      ['decided', 'reverted'],
    ]);
    expect(p.transitions[1]!.evidence.platformMessageId).toBe('1700000100.000100');
    expect(p.transitions[2]!.evidence.platformMessageId).toBe('1700090000.000100');
    expect(p.supersededBy).toBe(back.factId);
    expect(items.find((i) => i.itemId === back.factId)!.state).toBe('decided');
  });

  it('supersedes without revert language; an uncertain supersession moves nothing', () => {
    const a = fact('1700000000.000200', 'decision', 'We decided to use Postgres');
    const b = fact('1700100000.000200', 'decision', 'We decided to use CockroachDB instead of Postgres');
    const c = fact('1700200000.000200', 'decision', 'We decided to use Redis for caching');
    const items = deriveLifecycle({
      facts: [a, b, c],
      signals: [],
      supersessions: [
        { factId: a.factId, supersededBy: b.factId, invalidAt: b.messageTs, certain: true },
        { factId: b.factId, supersededBy: c.factId, invalidAt: c.messageTs, certain: false },
      ],
    });
    expect(items.map((i) => i.state)).toEqual(['superseded', 'decided', 'decided']);
  });

  it('closes, drops and reverts by thread replies only, never by an unrelated thread or an earlier message', () => {
    const task = fact('1700000000.000300', 'action_item', 'bob will migrate the cluster by friday', {
      actionTags: ['migrate', 'bob', 'by friday'],
      threadTs: '1700000000.000300',
    });
    const chore = fact('1700000050.000300', 'action_item', 'carol will write the docs', {
      actionTags: ['write', 'carol'],
      threadTs: '1700000050.000300',
    });
    const choice = fact('1700000090.000300', 'decision', 'We decided to ship the new deploy script', {
      threadTs: '1700000090.000300',
    });
    const items = deriveLifecycle({
      facts: [task, chore, choice],
      signals: [
        signal('1699999000.000300', 'done', '1700000000.000300'), // before the item: ignored
        signal('1700000500.000300', 'done, merged it', '1700000000.000300'),
        signal('1700000600.000300', "never mind, we won't do it", '1700000050.000300'),
        signal('1700000700.000300', 'we had to revert it, it broke prod', '1700000090.000300'),
        signal('1700000800.000300', 'done', '1799999999.000000'), // another thread
      ],
      supersessions: [],
    });
    const [t, c, d] = items;
    expect(t).toMatchObject({ state: 'done', owner: 'bob', dueDate: '2023-11-17' });
    expect(t!.transitions[1]!.evidence.platformMessageId).toBe('1700000500.000300');
    expect(c).toMatchObject({ state: 'dropped', owner: 'carol' });
    expect(d).toMatchObject({ state: 'reverted', kind: 'decision' });
    expect(d!.transitions[1]).toMatchObject({ from: 'decided', to: 'reverted', rule: 'reverted' });
  });

  it('is deterministic: input order does not change the result', () => {
    const facts = [
      fact('1700000000.000400', 'action_item', 'dave will fix the build'),
      fact('1700000010.000400', 'decision', 'How about we adopt trunk-based development for the repo'),
    ];
    const signals = [signal('1700000300.000400', 'fixed', null), signal('1700000400.000400', 'sounds good', null)];
    const one = deriveLifecycle({ facts, signals, supersessions: [] });
    const two = deriveLifecycle({ facts: [...facts].reverse(), signals: [...signals].reverse(), supersessions: [] });
    expect(two).toEqual(one);
    expect(one.map((i) => i.state)).toEqual(['done', 'decided']);
    expect(one[1]!.transitions[0]!.to).toBe('proposed');
  });
});

describe('cues', () => {
  it('reads agreement, completion, dropping and reverting, and not questions or negations', () => {
    expect(messageCues('+1')).toEqual(['agree']);
    expect(messageCues("Let's do it")).toEqual(['agree']);
    expect(messageCues('PR is merged')).toEqual(['done']);
    expect(messageCues('not fixed yet')).toEqual([]);
    expect(messageCues('is it merged?')).toEqual([]);
    expect(messageCues("we won't do this")).toEqual(['drop']);
    expect(messageCues('reverted in 1.2.3')).toEqual(['revert']);
    expect(isProposal('should we use Kafka?')).toBe(true);
    expect(isProposal('we use Kafka')).toBe(false);
    expect(ownerOf(['migrate', 'bob', 'friday'])).toBe('bob');
    expect(ownerOf(['Anshika Gautam', 'tomorrow'])).toBe('Anshika Gautam');
    expect(ownerOf(['try'])).toBeNull();
    expect(dueDateOf('by friday', '2018-02-05T10:00:00Z')).toBe('2018-02-09');
    expect(dueDateOf('tomorrow', '2018-02-05T10:00:00Z')).toBe('2018-02-06');
    expect(dueDateOf('due 2018-03-01', '2018-02-05T10:00:00Z')).toBe('2018-03-01');
    expect(dueDateOf('by Feb 20', '2018-02-05T10:00:00Z')).toBe('2018-02-20');
    expect(dueDateOf('sometime', '2018-02-05T10:00:00Z')).toBeNull();
  });
});
