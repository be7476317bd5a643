import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, openRuntime, type Runtime, replayProjector, waitForProjectors } from '@atlas/runtime';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');

/** A digest of a read store's rows (system-time columns left out: they record when a row was written). */
const digest = async (rt: Runtime, query: string): Promise<{ rows: number; hash: string }> => {
  const r = await sql.raw<Record<string, unknown>>(query).execute(rt.database.db);
  return { rows: r.rows.length, hash: createHash('sha256').update(JSON.stringify(r.rows)).digest('hex') };
};
const STORES = {
  keyword:
    'select fact_id, message_id, channel_id, text, fact_type, importance, topic_tags, entity_tags, author_name, message_ts, quality_score from keyword_facts order by fact_id',
  memories:
    'select id, message_uuid, channel_id, memory_text, quality_score, topic_tags, entity_tags, importance, fact_type, thread_context_summary, valid_at from memories order by id',
  messages:
    'select channel_id, id, text, author_name, ts, thread_ts, reactions, attachments, content_hash from messages order by channel_id, id',
  channels: 'select id, name, platform, last_sync, member_count from channels order by id',
};

const profiles: { name: string; env: Record<string, string> }[] = [{ name: 'embedded', env: {} }];
if (process.env.ATLAS_TEST_KAFKA_BROKERS) {
  profiles.push({
    name: 'kafka',
    env: {
      KAFKA_BROKERS: process.env.ATLAS_TEST_KAFKA_BROKERS,
      KAFKA_NAMESPACE: `replay-${randomUUID().slice(0, 8)}`,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      ...(process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL
        ? { SCHEMA_REGISTRY_URL: process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL }
        : {}),
    },
  });
}

for (const profile of profiles) {
  describe(`${profile.name}: replay rebuilds a read store equal to the original (slack-olake)`, () => {
    let rt: Runtime;
    const before: Record<string, { rows: number; hash: string }> = {};
    beforeAll(async () => {
      rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...profile.env }));
      await appendPlan(rt, await planImport(OLAKE));
      const { startProjectors } = await import('@atlas/runtime');
      const subs = await startProjectors(rt);
      await waitForProjectors(rt);
      await Promise.all(subs.map((s) => s.stop()));
      for (const [name, q] of Object.entries(STORES)) before[name] = await digest(rt, q);
    }, 300_000);
    afterAll(async () => rt?.close());

    it('keyword: every fact re-indexed, the index identical', async () => {
      const r = await replayProjector(rt, 'keyword');
      expect(r.events).toBeGreaterThanOrEqual(302);
      expect(before.keyword!.rows).toBeGreaterThan(100);
      expect(await digest(rt, STORES.keyword)).toEqual(before.keyword);
      console.log(
        `[${profile.name}] replay keyword: ${r.events} events in ${r.seconds} s, ${before.keyword!.rows} rows equal`,
      );
    }, 120_000);

    it('documents: channels, messages and memories rebuilt identical', async () => {
      const r = await replayProjector(rt, 'documents');
      for (const name of ['memories', 'messages', 'channels'])
        expect(await digest(rt, STORES[name as keyof typeof STORES]), name).toEqual(before[name]);
      console.log(
        `[${profile.name}] replay documents: ${r.events} events in ${r.seconds} s, ${before.messages!.rows} messages and ${before.memories!.rows} memories equal`,
      );
    }, 120_000);

    it('from a timestamp: only the events after it are read again', async () => {
      const r = await replayProjector(rt, 'keyword', { timestamp: Date.now() + 60_000 });
      expect(r.events).toBe(0);
      expect(await digest(rt, STORES.keyword)).toEqual(before.keyword);
    }, 60_000);
  });
}
