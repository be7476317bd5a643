import path from 'node:path';
import { buildApp } from '@atlas/api';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { apiPorts, appendPlan, drainProjectors, openRuntime, type Runtime, replayProjector } from '@atlas/runtime';
import { storeProfiles } from '@atlas/runtime/testing';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');

/**
 * Write intents end to end (spec "Write intent (two-phase persist)"): the real olake export imported as `atlas import`
 * does, then every intent is done and the stores agree with the intents: one intent per message with facts, their
 * fact counts add up to the document store's facts and to the vectors, and a graph `done` is a message with a graph
 * contribution, a graph `skipped` one without. A reconcile pass then finds nothing to retry, and a replay of the
 * reconciler rebuilds the same intents. With NEO4J_URL / ELASTICSEARCH_URL listed, also on those stores.
 */
for (const profile of storeProfiles('write-intents'))
  describe(`write intents after a real import (slack-olake, ${profile.name})`, () => {
    let rt: Runtime;
    const q = async <T>(query: string) => (await sql.raw<T>(query).execute(rt.database.db)).rows;

    beforeAll(async () => {
      rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...profile.env }));
      await appendPlan(rt, await planImport(OLAKE));
      await drainProjectors(rt, 0, false);
    }, 600_000);
    afterAll(async () => rt?.close());

    it('every intent is done, one per message with facts, and the stores agree with them', async () => {
      const counts = await rt.intents.countByState();
      const facts = (await rt.documents.counts()).facts;
      expect(facts).toBeGreaterThan(100);
      expect(counts).toEqual({ pending: 0, done: counts.done, failed: 0, abandoned: 0 });
      const [withFacts] = await q<{ n: number }>('select count(distinct message_uuid)::int as n from memories');
      expect(counts.done).toBe(withFacts!.n);
      const { intents, total } = await rt.intents.list({ limit: 500 });
      expect(total).toBe(counts.done);
      expect(intents.every((i) => i.vector.status === 'done' && i.retry_count === 0)).toBe(true);
      expect(intents.reduce((n, i) => n + i.fact_count, 0)).toBe(facts);
      expect(await rt.embeddings!.vectors.count()).toBe(facts);
      // The graph: done = the message contributed entities; skipped = it had none to write.
      const contributed = await rt.entityState.contributed(intents.map((i) => i.message_id));
      for (const i of intents)
        expect([i.message_id, i.graph.status]).toEqual([
          i.message_id,
          contributed.has(i.message_id) ? 'done' : 'skipped',
        ]);
      expect(intents.filter((i) => i.graph.status === 'done').length).toBeGreaterThan(0);
      // No orphan outcomes: every reported write belongs to an intent.
      const [orphans] = await q<{ n: number }>('select count(*)::int as n from write_intents where created_at is null');
      expect(orphans!.n).toBe(0);
    });

    it('POST /api/admin/reconcile finds nothing to retry and reports the states; the reconciler replays to the same intents', async () => {
      const app = await buildApp(apiPorts(rt));
      try {
        const res = await app.inject({ method: 'POST', url: '/api/admin/reconcile' });
        expect(res.statusCode).toBe(200);
        const body = res.json();
        expect(body).toMatchObject({ candidates: 0, retried: 0, deferred: 0, abandoned: 0, intents: [] });
        expect(body.writes).toEqual({ written: 0, skipped: 0, superseded: 0, failed: 0, permanent: 0 });
        expect(body.states).toEqual(await rt.intents.countByState());
        const listed = await app.inject({ method: 'GET', url: '/api/admin/write-intents?state=done&limit=5' });
        expect(listed.json()).toMatchObject({ total: body.states.done, limit: 5, offset: 0 });
        const one = listed.json().intents[0];
        expect((await app.inject({ method: 'GET', url: `/api/admin/write-intents/${one.intent_id}` })).json()).toEqual(
          one,
        );
      } finally {
        await app.close();
      }
      const snapshot = () =>
        q(
          'select intent_id, message_id, fact_count, extracted_at, facts_partition, facts_offset, created_at, vector_status, graph_status, retry_count, state from write_intents order by intent_id',
        );
      const before = await snapshot();
      await replayProjector(rt, 'reconciler');
      expect(await snapshot()).toEqual(before);
    });
  });
