import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planImport } from './index.js';

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const CLOJURIANS = path.join(DATA, 'slack-clojurians-2018-02/export');
const OLAKE = path.join(DATA, 'slack-olake/export');
const DCE = path.join(DATA, 'discord-ethglobal');
const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'atlas-members-'));
afterAll(() => rmSync(tmpRoot, { recursive: true, force: true }));

/** Two clojurians channels; `aleph` made private with two members (and a repeat), `arachne` left public. */
function exportWithPrivateChannel(): string {
  const dir = path.join(tmpRoot, 'export');
  mkdirSync(dir);
  const all = JSON.parse(readFileSync(path.join(CLOJURIANS, 'channels.json'), 'utf8')) as Record<string, unknown>[];
  const channels = all
    .filter((c) => c.name === 'aleph' || c.name === 'arachne')
    .map((c) => (c.name === 'aleph' ? { ...c, is_private: true, members: ['U2', 'U1', 'U2'] } : c));
  writeFileSync(path.join(dir, 'channels.json'), JSON.stringify(channels));
  copyFileSync(path.join(CLOJURIANS, 'users.json'), path.join(dir, 'users.json'));
  for (const ch of ['aleph', 'arachne']) {
    mkdirSync(path.join(dir, ch));
    for (const f of readdirSync(path.join(CLOJURIANS, ch)))
      copyFileSync(path.join(CLOJURIANS, ch, f), path.join(dir, ch, f));
  }
  return dir;
}

/**
 * The olake export (whose real groups.json is empty) with its channels moved out of channels.json into groups.json as
 * `groups` says: each entry keeps the channel's real fields, plus `members` when given (`null`: the key left out).
 * `extraChannels` are written to channels.json besides the channels not moved.
 */
function olakeWithGroups(name: string, groups: Record<string, string[] | null>, extraChannels: string[] = []): string {
  const dir = path.join(tmpRoot, name);
  mkdirSync(dir);
  const all = JSON.parse(readFileSync(path.join(OLAKE, 'channels.json'), 'utf8')) as Record<string, unknown>[];
  const group = (c: Record<string, unknown>) => {
    const { members: _m, is_private: _p, is_channel: _c, ...rest } = c;
    const members = groups[c.name as string];
    return { ...rest, is_group: true, ...(members ? { members } : {}) };
  };
  const moved = all.filter((c) => (c.name as string) in groups);
  writeFileSync(
    path.join(dir, 'channels.json'),
    JSON.stringify(all.filter((c) => !((c.name as string) in groups) || extraChannels.includes(c.name as string))),
  );
  writeFileSync(path.join(dir, 'groups.json'), JSON.stringify(moved.map(group)));
  for (const f of ['users.json', 'dms.json', 'mpims.json']) copyFileSync(path.join(OLAKE, f), path.join(dir, f));
  for (const ch of all.map((c) => c.name as string)) {
    mkdirSync(path.join(dir, ch));
    for (const f of readdirSync(path.join(OLAKE, ch))) copyFileSync(path.join(OLAKE, ch, f), path.join(dir, ch, f));
  }
  return dir;
}

describe('Slack groups.json: private channels of an export', () => {
  it('the real olake export: groups.json is empty, read, and changes nothing', async () => {
    const plan = await planImport(OLAKE);
    expect(plan.channels).toHaveLength(5);
    expect(plan.channels.every((c) => !c.isPrivate)).toBe(true);
    expect(plan.members).toEqual({});
    const dayFiles = plan.channels.reduce((n, c) => n + readdirSync(path.join(OLAKE, c.name)).length, 0);
    expect(plan.filesRead).toBe(3 + dayFiles); // channels.json, groups.json, users.json
  });

  it('a groups.json channel is imported like a channels.json one, always private, with its members', async () => {
    const before = await planImport(OLAKE);
    const dir = olakeWithGroups('groups', { discussions: ['U0817E9CGRM', 'U081FBXQJ3G', 'U0817E9CGRM'] });
    const plan = await planImport(dir);
    const discussions = plan.channels.find((c) => c.name === 'discussions')!;
    expect(discussions).toMatchObject({ channelId: 'C081K4RM07P', isPrivate: true, memberCount: 3 });
    expect(plan.members).toEqual({ C081K4RM07P: ['U0817E9CGRM', 'U081FBXQJ3G'] });
    // Its folder is read (not skipped as unlisted): the same messages as when channels.json listed it.
    expect(plan.perChannel.C081K4RM07P).toEqual(before.perChannel.C081K4RM07P);
    expect(plan.perChannel.C081K4RM07P!.kept).toBeGreaterThan(0);
    expect(plan.messages.filter((m) => m.channelId === 'C081K4RM07P')).toEqual(
      before.messages.filter((m) => m.channelId === 'C081K4RM07P'),
    );
    expect(plan.messages).toHaveLength(before.messages.length);
    expect(plan.filesRead).toBe(before.filesRead);
  });

  it('a group without a members list is private with no members (nobody but admins)', async () => {
    const plan = await planImport(olakeWithGroups('no-members', { general: null, discussions: ['U081FBXQJ3G'] }));
    expect(plan.channels.find((c) => c.name === 'general')).toMatchObject({ isPrivate: true });
    expect(plan.members).toEqual({ C081MTEGP8B: [], C081K4RM07P: ['U081FBXQJ3G'] });
  });

  it('a channel in both channels.json and groups.json is imported once, private (groups.json wins)', async () => {
    const plan = await planImport(olakeWithGroups('both', { help: ['U081FBXQJ3G'] }, ['help']));
    const help = plan.channels.filter((c) => c.name === 'help');
    expect(help).toHaveLength(1);
    expect(help[0]!.isPrivate).toBe(true);
    expect(plan.members).toEqual({ C081MV728N7: ['U081FBXQJ3G'] });
  });
});

describe('channel access from exports (ImportPlan.members)', () => {
  it('Slack: a private channel of channels.json keeps its listed members; a public one is public to the workspace', async () => {
    const plan = await planImport(exportWithPrivateChannel());
    const aleph = plan.channels.find((c) => c.name === 'aleph')!;
    const arachne = plan.channels.find((c) => c.name === 'arachne')!;
    expect(plan.members).toEqual({ [aleph.channelId]: ['U1', 'U2'] });
    expect(plan.members[arachne.channelId]).toBeUndefined();
  });

  it('Slack: the real clojurians export (public channels with members lists) has no private member lists', async () => {
    expect((await planImport(CLOJURIANS)).members).toEqual({});
  });

  it('DiscordChatExporter lists no members: every channel is public to the workspace', async () => {
    expect((await planImport(DCE)).members).toEqual({});
  });
});
