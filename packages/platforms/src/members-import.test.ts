import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { planImport } from './index.js';

const DATA = path.resolve(import.meta.dirname, '../../../../shared/data');
const CLOJURIANS = path.join(DATA, 'slack-clojurians-2018-02/export');
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
