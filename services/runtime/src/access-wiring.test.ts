import path from 'node:path';
import { DiscordEmulator, SlackEmulator } from '@atlas/platforms/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refreshChannelAccess } from './access-wiring.js';
import { membershipOfPlan } from './drain.js';
import { connect, openSyncHarness, type SyncHarness } from './testing/sync-harness.js';

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const HELP = 'C081MV728N7';
const GENERAL = 'C081MTEGP8B';
const HOUR = 3_600_000;

/**
 * Issue 23, point 4 ("Channel access follows the platform") on the emulators: membership is read on every sync and by
 * the ACL refresh, kept in the channel-access read model, and a member removed on the platform loses access at the
 * next refresh; stale private membership fails closed.
 */
describe('channel access follows the platform (Slack and Discord emulators)', () => {
  let slack: SlackEmulator;
  let discord: DiscordEmulator;
  let h: SyncHarness;
  let alice: string;
  let bob: string;
  let carol: string;
  let dan: string;
  let erin: string;
  let discordChannel: string;

  beforeAll(async () => {
    [slack, discord] = await Promise.all([
      SlackEmulator.start(path.join(DATA, 'slack-olake/export')),
      DiscordEmulator.start(path.join(DATA, 'discord-ethglobal')),
    ]);
    [alice, bob, carol] = slack.users.slice(0, 3).map((u) => u.id as string) as [string, string, string];
    [dan, erin] = [...discord.members.keys()].slice(0, 2) as [string, string];
    slack.setPrivate(HELP, true, [alice, bob]);
    discordChannel = String(discord.channels[0]!.id);
    discord.setPrivate(discordChannel);
    discord.setChannelMember(discordChannel, dan, true);
    const team = discord.addRole('team');
    discord.setChannelRole(discordChannel, team, true);
    discord.addMember({ id: erin, username: 'erin' }, [team]);
    h = await openSyncHarness(slack, {
      PLATFORM_B_API_URL: discord.url,
      SYNC_BATCH_SIZE: '50',
      SYNC_MAX_MESSAGES: '50',
    });
    await connect(h.rt, slack, [HELP, GENERAL]);
    const c = await h.rt.connections.create({
      name: 'ETHGlobal',
      platform: 'platform_b',
      credentials: { bot_token: discord.token, guild_id: discord.guild.id },
    });
    await h.rt.connections.saveChannels(c.id, [
      { id: discordChannel, name: '#chat', is_private: true, member_count: 2, sync_enabled: true },
    ]);
  }, 60_000);
  afterAll(async () => {
    await h?.close();
    await slack?.close();
    await discord?.close();
  });

  const a = (user_id: string) => ({ platform: 'platform_a', user_id }) as const;
  const b = (user_id: string) => ({ platform: 'platform_b', user_id }) as const;

  it('a sync reads the channel membership first (source sync): only its members see the private channel', async () => {
    const r = await h.call('POST', '/api/sync', { channel_id: HELP });
    expect(r.status).toBe(200);
    expect((await h.finished(HELP, r.body.job_id)).status).toBe('completed');
    expect(await h.rt.access.get(HELP)).toMatchObject({
      source: 'sync',
      is_private: true,
      members: [alice, bob].sort(),
    });
    expect((await h.rt.access.hiddenChannels(a(alice))).has(HELP)).toBe(false);
    expect((await h.rt.access.hiddenChannels(a(carol))).has(HELP)).toBe(true);
    expect((await h.rt.access.hiddenChannels(null)).has(HELP)).toBe(true);
  }, 90_000);

  it('the ACL refresh reads every selected channel of both connections and answers what the user may see', async () => {
    const res = await refreshChannelAccess(h.rt, { user_id: alice });
    expect(res).toMatchObject({
      user_id: alice,
      channels_checked: 3,
      private_channels: 2,
      visible_private_channels: [HELP],
      failed: [],
      caught_up: true,
    });
    expect(await h.rt.access.get(GENERAL)).toMatchObject({ is_private: false, members: null, source: 'refresh' });
    expect(await h.rt.access.get(discordChannel)).toMatchObject({ is_private: true, members: [dan, erin].sort() });
    expect((await h.rt.access.hiddenChannels(b(erin))).has(discordChannel)).toBe(false); // through the role overwrite
    expect((await h.rt.access.hiddenChannels(a(dan))).has(discordChannel)).toBe(true); // the other platform
  }, 30_000);

  it('a member removed on the platform loses access at the next refresh (Slack kick, Discord member deny)', async () => {
    slack.setChannelMember(HELP, alice, false);
    discord.setChannelMember(discordChannel, erin, false);
    const res = await refreshChannelAccess(h.rt, { user_id: alice });
    expect(res.visible_private_channels).toEqual([]);
    expect((await h.rt.access.hiddenChannels(a(alice))).has(HELP)).toBe(true);
    expect((await h.rt.access.hiddenChannels(a(bob))).has(HELP)).toBe(false);
    expect((await h.rt.access.hiddenChannels(b(erin))).has(discordChannel)).toBe(true);
    expect(
      (await refreshChannelAccess(h.rt, { user_id: dan, platform: 'platform_b' })).visible_private_channels,
    ).toEqual([discordChannel]);
  }, 30_000);

  it('a channel that cannot be read is reported and keeps its last membership, which fails closed once stale', async () => {
    slack.fault({ kind: 'status', status: 500, match: 'conversations.info', times: 10 });
    const res = await refreshChannelAccess(h.rt, { user_id: bob }, { deps: { client: { maxRetries: 0 } } });
    slack.clearFaults();
    expect(res.failed).toEqual(expect.arrayContaining([{ channel_id: HELP, code: 'PLATFORM_ERROR' }]));
    expect(res.visible_private_channels).toEqual([HELP]); // the last read is younger than two refresh periods
    const later = new Date(Date.now() + 2 * HOUR + 60_000);
    expect((await h.rt.access.hiddenChannels(a(bob), later)).has(HELP)).toBe(true);
    expect((await h.rt.access.hiddenChannels(a(bob), later)).has(GENERAL)).toBe(false); // public stays public
  }, 30_000);

  it('a sync whose membership read fails records the private channel without members: hidden from everyone', async () => {
    slack.fault({ kind: 'status', status: 500, match: 'conversations.members', times: 20 });
    try {
      const r = await h.call('POST', '/api/sync', { channel_id: HELP });
      expect((await h.finished(HELP, r.body.job_id)).status).toBe('completed');
    } finally {
      slack.clearFaults();
    }
    expect(await h.rt.access.get(HELP)).toMatchObject({ source: 'sync', is_private: true, members: null });
    expect((await h.rt.access.hiddenChannels(a(bob))).has(HELP)).toBe(true);
    await refreshChannelAccess(h.rt, { user_id: bob }); // the next read restores it
    expect((await h.rt.access.hiddenChannels(a(bob))).has(HELP)).toBe(false);
  }, 90_000);

  it('an import lists the export members of private channels, else public to the workspace', () => {
    const events = membershipOfPlan(
      {
        channels: [
          { platform: 'platform_a', channelId: 'C1' },
          { platform: 'platform_b', channelId: '2' },
        ] as never,
        members: { C1: ['U2', 'U1'] },
      },
      new Date('2026-03-01T00:00:00.000Z'),
    );
    expect(events.map((e) => e.data)).toEqual([
      {
        connectionId: null,
        platform: 'platform_a',
        channelId: 'C1',
        isPrivate: true,
        members: ['U2', 'U1'],
        source: 'import',
        observedAt: '2026-03-01T00:00:00.000Z',
      },
      {
        connectionId: null,
        platform: 'platform_b',
        channelId: '2',
        isPrivate: false,
        members: null,
        source: 'import',
        observedAt: '2026-03-01T00:00:00.000Z',
      },
    ]);
  });
});
