import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DiscordEmulator } from './discord-emulator.test-support.js';
import { type PlatformClient, platformClient } from './index.js';
import { SlackEmulator } from './slack-emulator.test-support.js';

const DATA = path.resolve(import.meta.dirname, '../../../../../shared/data');
const FAST = { maxRetries: 2, backoffMs: 5, maxBackoffMs: 20, timeoutMs: 5000 };

/** One emulated platform as the contract drives it: a channel, a way to make it private with members, a removal. */
interface Adapter {
  channel: string;
  /** Two users of the workspace (ids as the platform spells them). */
  users: [string, string];
  client(): PlatformClient;
  makePrivate(members: string[]): void;
  remove(userId: string): void;
  close(): Promise<void>;
}

const slack = async (): Promise<Adapter> => {
  const emu = await SlackEmulator.start(path.join(DATA, 'slack-olake/export'));
  const channel = 'C081MV728N7';
  const users = emu.users.slice(0, 2).map((u) => u.id as string) as [string, string];
  return {
    channel,
    users,
    client: () =>
      platformClient(
        { platform: 'platform_a', bot_token: emu.token, signing_secret: 's' },
        { slackApiUrl: emu.url, ...FAST },
      ),
    makePrivate: (members) => emu.setPrivate(channel, true, members),
    remove: (u) => emu.setChannelMember(channel, u, false),
    close: () => emu.close(),
  };
};

const discord = async (): Promise<Adapter> => {
  const emu = await DiscordEmulator.start(path.join(DATA, 'discord-ethglobal'));
  const channel = '1319401418532065280';
  const users = [...emu.members.keys()].slice(0, 2) as [string, string];
  return {
    channel,
    users,
    client: () =>
      platformClient(
        { platform: 'platform_b', bot_token: emu.token, guild_id: emu.guild.id },
        { discordApiUrl: emu.url, ...FAST },
      ),
    makePrivate: (members) => {
      emu.setPrivate(channel);
      for (const u of members) emu.setChannelMember(channel, u, true);
    },
    remove: (u) => emu.setChannelMember(channel, u, false),
    close: () => emu.close(),
  };
};

for (const [name, open] of [
  ['platform_a (Slack emulator)', slack],
  ['platform_b (Discord emulator)', discord],
] as const) {
  describe(`${name}: PlatformClient.listMembers`, () => {
    let a: Adapter;
    beforeAll(async () => {
      a = await open();
    });
    afterAll(() => a.close());

    it('a public channel has no member list (public to the workspace)', async () => {
      expect(await a.client().listMembers(a.channel)).toEqual({
        channel_id: a.channel,
        is_private: false,
        members: null,
      });
    });

    it('a private channel lists exactly its members, sorted; a removed member is gone at the next read', async () => {
      a.makePrivate([a.users[1], a.users[0]]);
      const before = await a.client().listMembers(a.channel);
      expect(before).toEqual({ channel_id: a.channel, is_private: true, members: [...a.users].sort() });
      a.remove(a.users[0]);
      expect((await a.client().listMembers(a.channel)).members).toEqual([a.users[1]]);
    });

    it('an unknown channel is CHANNEL_NOT_FOUND', async () => {
      await expect(a.client().listMembers('999999999999999999')).rejects.toMatchObject({ code: 'CHANNEL_NOT_FOUND' });
    });
  });
}

describe('platform_a: conversations.members is read page by page', () => {
  it('reads every page of a large private channel', async () => {
    const emu = await SlackEmulator.start(path.join(DATA, 'slack-olake/export'));
    try {
      const members = Array.from({ length: 450 }, (_, i) => `U${String(i).padStart(8, '0')}`);
      emu.setPrivate('C081MV728N7', true, members);
      const c = platformClient(
        { platform: 'platform_a', bot_token: emu.token, signing_secret: 's' },
        { slackApiUrl: emu.url, ...FAST },
      );
      expect((await c.listMembers('C081MV728N7')).members).toEqual(members);
      expect(emu.requests.filter((r) => r.call === 'conversations.members')).toHaveLength(3);
    } finally {
      await emu.close();
    }
  });
});

describe('platform_b: VIEW_CHANNEL resolved from roles and overwrites', () => {
  let emu: DiscordEmulator;
  const channel = '1319401418532065280';
  beforeAll(async () => {
    emu = await DiscordEmulator.start(path.join(DATA, 'discord-ethglobal'));
  });
  afterAll(() => emu.close());
  const client = () =>
    platformClient(
      { platform: 'platform_b', bot_token: emu.token, guild_id: emu.guild.id },
      { discordApiUrl: emu.url, ...FAST },
    );

  it('role overwrites, member overwrites, administrators and the owner; members read over several pages', async () => {
    emu.setPrivate(channel);
    const team = emu.addRole('team');
    const admins = emu.addRole('admins', 1n << 3n); // ADMINISTRATOR
    emu.setChannelRole(channel, team, true);
    const many = Array.from({ length: 1200 }, (_, i) => String(2000000000000000000n + BigInt(i)));
    for (const id of many) emu.addMember({ id, username: `m${id}` }, [team]);
    emu.addMember({ id: '3000000000000000001', username: 'boss' }, [admins]);
    emu.addMember({ id: '3000000000000000002', username: 'owner' });
    emu.ownerId = '3000000000000000002';
    emu.setChannelMember(channel, many[0]!, false); // a member deny beats the role's allow
    const { members } = await client().listMembers(channel);
    expect(members).toContain('3000000000000000001');
    expect(members).toContain('3000000000000000002');
    expect(members).not.toContain(many[0]);
    expect(members).toContain(many[1199]);
    expect(members).not.toContain(emu.bot.id); // the @everyone deny applies to the bot's role too
    expect(members).toHaveLength(1199 + 2);
    expect(emu.requests.filter((r) => /^\/guilds\/\d+\/members$/.test(r.call)).length).toBeGreaterThanOrEqual(2);
  });
});
