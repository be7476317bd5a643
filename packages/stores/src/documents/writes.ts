import type { EntitiesExtracted, FactsExtracted } from '@atlas/core';
import type { Kysely } from 'kysely';
import type { DocumentTables } from './tables.js';

/** Messages per statement. */
export const CHUNK = 500;

/**
 * DocumentStore.replaceFacts: each message's facts replace its earlier ones (the last set of a message in the batch
 * wins), in one transaction, CHUNK messages per statement.
 */
export const writeFacts = async (db: Kysely<DocumentTables>, sets: readonly FactsExtracted[]): Promise<void> => {
  if (sets.length === 0) return;
  // Only the last set of a message counts (a batch may hold a re-extraction).
  const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < last.length; i += CHUNK) {
      const chunk = last.slice(i, i + CHUNK);
      const keep = chunk.flatMap((s) => s.facts.map((f) => f.factId));
      let del = trx.deleteFrom('memories').where(
        'message_uuid',
        'in',
        chunk.map((s) => s.messageId),
      );
      if (keep.length > 0) del = del.where('id', 'not in', keep);
      await del.execute();
      const rows = chunk.flatMap((s) =>
        s.facts.map((f) => ({
          id: f.factId,
          message_uuid: s.messageId,
          channel_id: s.channelId,
          source_message_id: s.sourceMessageId,
          platform: s.platform,
          memory_text: f.memoryText,
          quality_score: f.qualityScore,
          author_id: f.authorId,
          author_name: f.authorName,
          message_ts: f.messageTs,
          thread_ts: f.threadTs,
          permalink: f.permalink,
          topic_tags: f.topicTags,
          entity_tags: f.entityTags,
          action_tags: f.actionTags,
          importance: f.importance,
          fact_type: f.factType,
          thread_context_summary: f.threadContextSummary,
          valid_at: f.validAt,
          invalid_at: null,
          superseded_by: null,
          source_lang: f.sourceLang,
          cluster_id: null,
          extractor: s.extractor,
        })),
      );
      if (rows.length === 0) continue;
      await trx
        .insertInto('memories')
        .values(rows)
        .onConflict((oc) =>
          oc.column('id').doUpdateSet((eb) => ({
            memory_text: eb.ref('excluded.memory_text'),
            quality_score: eb.ref('excluded.quality_score'),
            topic_tags: eb.ref('excluded.topic_tags'),
            entity_tags: eb.ref('excluded.entity_tags'),
            action_tags: eb.ref('excluded.action_tags'),
            importance: eb.ref('excluded.importance'),
            fact_type: eb.ref('excluded.fact_type'),
            thread_context_summary: eb.ref('excluded.thread_context_summary'),
            permalink: eb.ref('excluded.permalink'),
            extractor: eb.ref('excluded.extractor'),
            updated_at: eb.fn<string>('now'),
          })),
        )
        .execute();
    }
  });
};

/**
 * DocumentStore.replaceGraphLinks: each message's fact-entity links and supersessions replace its earlier ones (the
 * last set of a message wins), in one transaction.
 */
export const writeGraphLinks = async (
  db: Kysely<DocumentTables>,
  sets: readonly EntitiesExtracted[],
): Promise<void> => {
  if (sets.length === 0) return;
  const last = [...new Map(sets.map((s) => [s.messageId, s])).values()];
  await db.transaction().execute(async (trx) => {
    for (let i = 0; i < last.length; i += CHUNK) {
      const chunk = last.slice(i, i + CHUNK);
      const ids = chunk.map((s) => s.messageId);
      await trx.deleteFrom('memory_entities').where('message_uuid', 'in', ids).execute();
      await trx.deleteFrom('fact_supersessions').where('by_message_uuid', 'in', ids).execute();
      const links = new Map<string, { fact_id: string; entity_id: string; message_uuid: string; channel_id: string }>();
      for (const s of chunk)
        for (const e of s.entities)
          for (const f of e.factIds)
            links.set(`${f}\u0000${e.entityId}`, {
              fact_id: f,
              entity_id: e.entityId,
              message_uuid: s.messageId,
              channel_id: s.channelId,
            });
      if (links.size > 0) {
        await trx
          .insertInto('memory_entities')
          .values([...links.values()])
          .onConflict((oc) => oc.columns(['fact_id', 'entity_id']).doNothing())
          .execute();
      }
      const sups = new Map(
        chunk.flatMap((s) =>
          s.supersessions.map((x) => [
            `${s.messageId}\u0000${x.factId}`,
            {
              by_message_uuid: s.messageId,
              channel_id: s.channelId,
              fact_id: x.factId,
              superseded_by: x.supersededBy,
              invalid_at: x.invalidAt,
              certain: x.certain,
              reason: x.reason,
            },
          ]),
        ),
      );
      if (sups.size > 0)
        await trx
          .insertInto('fact_supersessions')
          .values([...sups.values()])
          .execute();
    }
  });
};
