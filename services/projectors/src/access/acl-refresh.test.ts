import type { NewEvent } from '@atlas/core';
import { type ChannelMembers, type PlatformClient, PlatformError } from '@atlas/platforms';
import type { Connection, ConnectionChannel } from '@atlas/stores';
import { describe, expect, it } from 'vitest';
import { type AclRefreshDeps, refreshChannelMemberships, startAclRefresher } from './acl-refresh.js';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const conn = (id: string, status: Connection['status']): Connection =>
  ({ id, name: id, platform: 'platform_a', status }) as Connection;
const channel = (id: string, sync_enabled = true): ConnectionChannel => ({
  id,
  name: id,
  is_private: true,
  member_count: 2,
  sync_enabled,
});

/** Connections c1 (connected: C1 private, C2 public, C3 gone, C4 not selected) and c2 (disconnected: C5). */
const deps = (appended: NewEvent[][]): AclRefreshDeps => ({
  eventLog: {
    append: async (_topic, events) => {
      appended.push(events as NewEvent[]);
      return [];
    },
  },
  connections: {
    list: async () => [conn('c1', 'connected'), conn('c2', 'disconnected')],
    channels: async (id) =>
      id === 'c1' ? [channel('C1'), channel('C2'), channel('C3'), channel('C4', false)] : [channel('C5')],
    credentials: async () => ({ platform: 'platform_a', credentials: { bot_token: 't', signing_secret: 's' } }),
  },
  platformClient: () =>
    ({
      platform: 'platform_a',
      listMembers: async (id: string): Promise<ChannelMembers> => {
        if (id === 'C3') throw new PlatformError('CHANNEL_NOT_FOUND', 'gone', { retriable: false });
        return id === 'C1'
          ? { channel_id: id, is_private: true, members: ['U1', 'U2'] }
          : { channel_id: id, is_private: false, members: null };
      },
    }) as unknown as PlatformClient,
  now: () => NOW,
});

describe('the ACL refresh pass', () => {
  it('reads every selected channel of every connected connection, appends one observation each, reports failures', async () => {
    const appended: NewEvent[][] = [];
    const out = await refreshChannelMemberships(deps(appended));
    expect(out.refreshed_at).toBe(NOW.toISOString());
    expect(out.channels.map((c) => [c.channel_id, c.is_private, c.code])).toEqual([
      ['C1', true, null],
      ['C2', false, null],
      ['C3', null, 'CHANNEL_NOT_FOUND'],
    ]);
    expect(appended).toHaveLength(1); // one append per connection
    expect(appended[0]!.map((e) => e.data)).toEqual([
      {
        connectionId: 'c1',
        platform: 'platform_a',
        channelId: 'C1',
        isPrivate: true,
        members: ['U1', 'U2'],
        source: 'refresh',
        observedAt: NOW.toISOString(),
      },
      {
        connectionId: 'c1',
        platform: 'platform_a',
        channelId: 'C2',
        isPrivate: false,
        members: null,
        source: 'refresh',
        observedAt: NOW.toISOString(),
      },
    ]);
  });

  it('the refresher runs a pass at start and on tick, one at a time', async () => {
    const appended: NewEvent[][] = [];
    const r = startAclRefresher(deps(appended), { intervalMs: 3_600_000 });
    try {
      await new Promise((res) => setTimeout(res, 20));
      expect(appended).toHaveLength(1);
      const [a, b] = await Promise.all([r.tick(), r.tick()]);
      expect(a?.appended).toBe(2);
      expect(b?.appended).toBe(2);
      expect(appended).toHaveLength(3);
    } finally {
      r.stop();
    }
  });
});
