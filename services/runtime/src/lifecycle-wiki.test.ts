import type { LifecycleItem } from '@atlas/core';
import type { GraphEntity } from '@atlas/stores';
import { describe, expect, it } from 'vitest';
import { lifecycleGraphSource, withLifecycleState } from './lifecycle-wiki.js';

const item = (itemId: string, state: LifecycleItem['state'], createdAt: string): LifecycleItem => {
  const ev = {
    messageId: 'm',
    platformMessageId: '1.1',
    permalink: 'https://x/p',
    authorId: 'U',
    authorName: 'u',
    excerpt: '',
  };
  return {
    itemId,
    channelId: 'C1',
    kind: 'decision',
    state,
    title: itemId,
    owner: null,
    dueDate: null,
    createdAt,
    updatedAt: createdAt,
    supersededBy: null,
    source: ev,
    threadTs: null,
    transitions: [{ from: null, to: 'decided', at: createdAt, rule: 'opened', evidence: ev }],
  };
};

const entity = (type: GraphEntity['type'], facts: string[], properties: Record<string, string>) =>
  ({ id: `e-${facts.join('-')}`, type, name: 'n', source_fact_ids: facts, properties }) as unknown as GraphEntity;

describe('Decision entities with their lifecycle state (the wiki Decisions page)', () => {
  it('takes the state of the newest source fact’s item; keeps superseded_by only when superseded', () => {
    const items = new Map([
      ['f1', item('f1', 'superseded', '2026-01-01T00:00:00Z')],
      ['f2', item('f2', 'reverted', '2026-01-02T00:00:00Z')],
    ]);
    const e = entity('Decision', ['f1', 'f2'], { status: 'superseded', superseded_by: 'Use X', date: '2026-01-01' });
    expect(withLifecycleState(e, items).properties).toEqual({ status: 'reverted', date: '2026-01-01' });
    const only = entity('Decision', ['f1'], { superseded_by: 'Use X' });
    expect(withLifecycleState(only, items).properties).toEqual({ status: 'superseded', superseded_by: 'Use X' });
    const none = entity('Decision', ['f9'], { status: 'agreed' });
    expect(withLifecycleState(none, items)).toBe(none);
  });

  it('decorates Decision rows of listEntities and listEntitiesMany, nothing else', async () => {
    const rows = [entity('Decision', ['f1'], { status: 'agreed' }), entity('Person', ['f1'], {})];
    const source = lifecycleGraphSource(
      { listEntities: async () => rows, listEntitiesMany: async (qs) => qs.map(() => rows) },
      { byIds: async (ids) => new Map(ids.map((id) => [id, item(id, 'proposed', '2026-01-01T00:00:00Z')])) },
    );
    const one = await source.listEntities({ channelId: 'C1', type: 'Decision', limit: 10 });
    expect(one.map((e) => e.properties.status)).toEqual(['proposed', undefined]);
    const many = await source.listEntitiesMany([{ channelId: 'C1', type: 'Decision', limit: 10 }]);
    expect(many[0]!.map((e) => e.properties.status)).toEqual(['proposed', undefined]);
  });
});
