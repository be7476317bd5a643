import { DEFAULT_CHANNEL_SETTINGS, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { channelCommandDeps, retentionDeps, startProjectors, waitForProjectors } from '@atlas/runtime';
import { openProjectorHarness } from '@atlas/runtime/testing';
import { channelEvent, freshChannelId, messageEvent } from '@atlas/stores/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendChannelCommand, channelSettings } from './channel-commands.js';
import { runRetentionPass, startRetentionScheduler } from './retention.js';

type Harness = Awaited<ReturnType<typeof openProjectorHarness>>;
const DAY = 86_400;
const NOW = new Date('2026-03-01T00:00:00.000Z');
const sec = (daysAgo: number) => Math.floor(NOW.getTime() / 1000) - daysAgo * DAY;

/** Channel settings retention_days: the retention pass deletes old messages, and their facts leave every store. */
describe('retention', () => {
  let h: Harness;
  let subs: Subscription[];
  const ch = freshChannelId();
  const msgs = [
    messageEvent(ch, sec(100), 'We decided to move the billing service to Kafka Streams next quarter.'),
    messageEvent(ch, sec(40), 'Bob will migrate the Postgres replicas to version 16 by Friday.'),
    messageEvent(ch, sec(1), 'We decided to adopt Grafana Tempo for tracing across the platform.'),
  ];
  const settings = (retentionDays: number | null): NewEvent<'ChannelSettingsUpdated'> => ({
    type: 'ChannelSettingsUpdated',
    key: ch,
    data: {
      channelId: ch,
      syncEnabled: true,
      wikiEnabled: true,
      graphEnabled: true,
      factExtractionEnabled: true,
      retentionDays,
      updatedAt: NOW.toISOString(),
    },
  });
  const factsOf = async (platformMessageId: string) =>
    (await h.documents.listMemories({ channelId: ch, page: 1, limit: 100 })).rows
      .filter((r) => r.source_message_id === platformMessageId)
      .map((r) => r.id);

  beforeAll(async () => {
    h = await openProjectorHarness();
    subs = await startProjectors(h);
    await h.eventLog.append(TOPICS.messages, [
      { type: 'ChannelDiscovered', key: ch, data: channelEvent(ch) },
      ...msgs.map((m) => ({ type: 'MessageIngested' as const, key: ch, data: m })),
    ]);
    await waitForProjectors(h);
  }, 120_000);
  afterAll(async () => {
    await Promise.all((subs ?? []).map((s) => s.stop()));
    await h?.close();
  });

  it('keeps everything while retention_days is null (the default)', async () => {
    expect(await channelSettings(h, ch)).toEqual(DEFAULT_CHANNEL_SETTINGS);
    expect(await channelSettings(h, 'unknown')).toEqual(DEFAULT_CHANNEL_SETTINGS);
    expect(await runRetentionPass(retentionDeps(h), { now: NOW })).toEqual({ channels: 0, deleted: 0 });
    expect((await h.documents.getChannel(ch))?.message_count).toBe(3);
  });

  it('retention_days 30 deletes the two older messages; their facts leave every store; a second pass does nothing', async () => {
    const old = [...(await factsOf(msgs[0]!.platformMessageId)), ...(await factsOf(msgs[1]!.platformMessageId))];
    const kept = await factsOf(msgs[2]!.platformMessageId);
    expect(old.length).toBeGreaterThan(0);
    expect(kept.length).toBeGreaterThan(0);
    const entitiesOf = async (ids: string[]) =>
      (await h.graph.listEntities({ channelId: ch, limit: 1000 })).filter((e) =>
        e.source_fact_ids.some((f) => ids.includes(f)),
      );
    expect((await entitiesOf(old)).length).toBeGreaterThan(0);

    await appendChannelCommand(channelCommandDeps(h), settings(30));
    expect((await channelSettings(h, ch)).retention_days).toBe(30);
    expect(await runRetentionPass(retentionDeps(h), { now: NOW })).toEqual({ channels: 1, deleted: 2 });
    await waitForProjectors(h);

    expect((await h.documents.listMessages(ch, { limit: 10 })).messages.map((m) => m.id)).toEqual([
      msgs[2]!.platformMessageId,
    ]);
    expect((await h.documents.getMemories(old)).size).toBe(0);
    const kw = await h.keyword.search({ query: '*', channelId: ch, limit: 100 });
    expect(kw.hits.map((x) => x.factId).sort()).toEqual([...kept].sort());
    expect((await h.embeddings!.vectors.vectorsOf(old)).size).toBe(0);
    expect((await h.embeddings!.vectors.vectorsOf(kept)).size).toBe(kept.length);
    expect(await entitiesOf(old)).toEqual([]);
    expect(await runRetentionPass(retentionDeps(h), { now: NOW })).toEqual({ channels: 1, deleted: 0 });
  });

  it('schedules passes with a five-field cron (off: none) and refuses a bad expression', () => {
    const off = startRetentionScheduler(retentionDeps(h), { cron: 'off' });
    expect(off.nextRun()).toBeNull();
    const hourly = startRetentionScheduler(retentionDeps(h), { cron: '17 * * * *' });
    expect(hourly.nextRun()?.getUTCMinutes()).toBe(17);
    hourly.stop();
    expect(() => startRetentionScheduler(retentionDeps(h), { cron: '* * *' })).toThrow(/five-field/);
    expect(() => startRetentionScheduler(retentionDeps(h), { cron: '99 * * * *' })).toThrow(/RETENTION_CRON/);
  });
});
