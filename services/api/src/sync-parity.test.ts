import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { DiscordEmulator, SlackEmulator } from '@atlas/platforms/testing';
import { appendPlan, drainProjectors, openRuntime, type Runtime } from '@atlas/runtime';
import { connect, openSyncHarness, type SyncHarness } from '@atlas/runtime/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLOJURIANS = path.resolve(import.meta.dirname, '../../../../shared/data/slack-clojurians-2018-02/export');
const ETHGLOBAL = path.resolve(import.meta.dirname, '../../../../shared/data/discord-ethglobal');

/** What a reader sees of every message (source and ingestion time aside), in a stable order. */
const messages = async (db: Runtime['database']['db']) =>
  (
    await sql<Record<string, unknown>>`select channel_id, id, message_uuid, platform, text, author_id, author_name,
      author_is_bot, ts, thread_ts, reply_to_id, subtype, reactions, attachments, has_media, edited_at, permalink,
      content_hash, deleted_at from messages order by channel_id, id`.execute(db)
  ).rows;

/** Every fact as the memories routes show it (extraction time aside), in a stable order. */
const facts = async (db: Runtime['database']['db']) =>
  (
    await sql<Record<string, unknown>>`select id, message_uuid, channel_id, source_message_id, memory_text,
      quality_score, author_id, author_name, message_ts, thread_ts, permalink, topic_tags, entity_tags, action_tags,
      importance, fact_type, thread_context_summary, valid_at, source_lang from memories order by id`.execute(db)
  ).rows;

/**
 * Channels as both paths map them. member_count is left out: this export's channels.json has no member lists, so the
 * importer counts authors while sync reads the platform's num_members (0 on the emulator serving this export).
 */
/**
 * What differs between two row sets keyed by `key`: rows only in `a`, only in `b`, and changed rows with the fields
 * that differ (at most 5 examples of each, so a failure reads at a glance).
 */
const difference = (
  a: Record<string, unknown>[],
  b: Record<string, unknown>[],
  key: (r: Record<string, unknown>) => string,
) => {
  const ka = new Map(a.map((r) => [key(r), r]));
  const kb = new Map(b.map((r) => [key(r), r]));
  const onlyA = [...ka.keys()].filter((k) => !kb.has(k));
  const onlyB = [...kb.keys()].filter((k) => !ka.has(k));
  const changed = [...ka.entries()]
    .filter(([k]) => kb.has(k))
    .map(([k, r]) => {
      const other = kb.get(k)!;
      const fields = Object.keys(r).filter((f) => JSON.stringify(r[f]) !== JSON.stringify(other[f]));
      return { k, fields: fields.map((f) => `${f}: ${JSON.stringify(r[f])} vs ${JSON.stringify(other[f])}`) };
    })
    .filter((c) => c.fields.length > 0);
  return {
    onlyImported: { count: onlyA.length, examples: onlyA.slice(0, 5) },
    onlySynced: { count: onlyB.length, examples: onlyB.slice(0, 5) },
    changed: { count: changed.length, examples: changed.slice(0, 5) },
  };
};
const none = { count: 0, examples: [] };

const channels = async (db: Runtime['database']['db']) =>
  (
    await sql<Record<string, unknown>>`select id, platform, workspace_id, workspace_name, name, is_private, topic,
      platform_created_at from channels order by id`.execute(db)
  ).rows;

/**
 * Issue 8, Done when: syncing every channel of the Clojurians export through the Slack emulator yields the same
 * messages and facts as importing the export, including after an interruption mid-sync and a restart.
 */
describe('sync of every Clojurians channel = import of the export', () => {
  let emu: SlackEmulator;
  let imported: Runtime;
  let dir: string;
  let h: SyncHarness | undefined;
  /**
   * Replies whose thread root predates the export (the export starts on 2018-02-01): no platform call reaches them,
   * since conversations.history lists roots and conversations.replies needs the root (the emulator, serving the export,
   * has none; real Slack would return the root too). They are left out of the comparison, with their facts.
   */
  const orphans = new Set<string>();
  beforeAll(async () => {
    emu = await SlackEmulator.start(CLOJURIANS);
    dir = mkdtempSync(path.join(tmpdir(), 'atlas-sync-parity-'));
    imported = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    const plan = await planImport(CLOJURIANS);
    const ids = new Set(plan.messages.map((m) => `${m.channelId}/${m.platformMessageId}`));
    for (const m of plan.messages)
      if (
        m.threadTs &&
        m.threadTs !== m.platformMessageId &&
        m.subtype !== 'thread_broadcast' && // also in the channel's history
        !ids.has(`${m.channelId}/${m.threadTs}`)
      )
        orphans.add(`${m.channelId}/${m.platformMessageId}`);
    await appendPlan(imported, plan);
    await drainProjectors(imported, 0, false);
  }, 300_000);
  afterAll(async () => {
    await h?.close();
    await imported?.close();
    await emu?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('same channels, messages and facts, with a process restart in the middle', async () => {
    const env = { ATLAS_DATA_DIR: dir, SYNC_MAX_MESSAGES: '100000' };
    h = await openSyncHarness(emu, env);
    const ids = emu.channels.map((c) => String(c.id));
    await connect(h.rt, emu, ids);
    const jobs = new Map<string, string>();
    for (const id of ids) {
      const r = await h.call('POST', '/api/sync', { channel_id: id });
      expect(r.status).toBe(200);
      jobs.set(id, r.body.job_id);
    }
    // Interrupt once a quarter of the jobs are done and one is fetching.
    const first = h;
    const until = Date.now() + 120_000;
    for (;;) {
      const done = new Set(first.updates.filter((u) => u.status === 'completed').map((u) => u.jobId));
      const fetching = first.updates.some((u) => !done.has(u.jobId) && u.processedMessages > 0);
      if ((done.size >= ids.length / 4 && fetching) || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    await h.close();
    h = undefined;
    h = await openSyncHarness(emu, env);
    const open = await h.rt.sync.openJobs();
    expect(open.length).toBeGreaterThan(0);
    expect(open.length).toBeLessThan(ids.length);
    for (const [channelId, jobId] of jobs)
      expect((await h.finished(channelId, jobId, 180_000)).status).toBe('completed');

    const [a, b] = [imported.database.db, h.rt.database.db];
    expect(await channels(b)).toEqual(await channels(a));
    expect(orphans.size).toBeLessThan(50);
    const reachable = (r: Record<string, unknown>, id: unknown) => !orphans.has(`${r.channel_id}/${id}`);
    const [ma, mb] = [(await messages(a)).filter((r) => reachable(r, r.id)), await messages(b)];
    expect(ma.length).toBeGreaterThan(7500);
    expect(difference(ma, mb, (r) => `${r.channel_id}/${r.id}`)).toEqual({
      onlyImported: none,
      onlySynced: none,
      changed: none,
    });
    const [fa, fb] = [(await facts(a)).filter((r) => reachable(r, r.source_message_id)), await facts(b)];
    expect(fa.length).toBeGreaterThan(1000);
    expect(difference(fa, fb, (r) => String(r.id))).toEqual({ onlyImported: none, onlySynced: none, changed: none });
  }, 900_000);
});

/** The same on platform_b: the ETHGlobal channel synced through the Discord emulator equals its import. */
describe('sync of the ETHGlobal Discord channel = import of its export', () => {
  let emu: DiscordEmulator;
  let imported: Runtime;
  let h: SyncHarness | undefined;
  beforeAll(async () => {
    emu = await DiscordEmulator.start(ETHGLOBAL);
    imported = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
    await appendPlan(imported, await planImport(ETHGLOBAL));
    await drainProjectors(imported, 0, false);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await imported?.close();
    await emu?.close();
  });

  it('same channel, messages and facts', async () => {
    h = await openSyncHarness({ url: 'http://127.0.0.1:9/api/' }, { PLATFORM_B_API_URL: emu.url });
    const channelId = String(emu.channels[0]!.id);
    const c = await h.rt.connections.create({
      name: 'ETHGlobal',
      platform: 'platform_b',
      credentials: { bot_token: emu.token, guild_id: emu.guild.id },
    });
    await h.rt.connections.saveChannels(c.id, [
      { id: channelId, name: '#chat', is_private: false, member_count: 1, sync_enabled: true },
    ]);
    const r = await h.call('POST', '/api/sync', { channel_id: channelId });
    expect((await h.finished(channelId, r.body.job_id, 120_000)).status).toBe('completed');
    const [a, b] = [imported.database.db, h.rt.database.db];
    expect(await channels(b)).toEqual(await channels(a));
    const [ma, mb] = [await messages(a), await messages(b)];
    expect(ma.length).toBeGreaterThan(400);
    expect(difference(ma, mb, (r) => `${r.channel_id}/${r.id}`)).toEqual({
      onlyImported: none,
      onlySynced: none,
      changed: none,
    });
    const [fa, fb] = [await facts(a), await facts(b)];
    expect(fa.length).toBeGreaterThan(50);
    expect(difference(fa, fb, (r) => String(r.id))).toEqual({ onlyImported: none, onlySynced: none, changed: none });
  }, 180_000);
});
