import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { buildApp } from '@atlas/api';
import { loadConfig, type MessageIngested, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { planImport } from '@atlas/platforms';
import { PROJECTORS } from '@atlas/projectors';
import {
  apiPorts,
  appendPlan,
  drainProjectors,
  openRuntime,
  type Runtime,
  replayProjector,
  startProjectors,
  waitForProjectors,
} from '@atlas/runtime';
import { storeProfiles } from '@atlas/runtime/testing';
import { ElasticsearchKeywordIndex } from '@atlas/stores';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const OLAKE = path.resolve(import.meta.dirname, '../../shared/data/slack-olake/export');

/** The embedded stores; with the servers listed, the graph on Neo4j and the keyword index on Elasticsearch too. */
const profiles = storeProfiles('channel-data');
// The event log on Kafka when listed: offsets there count transaction markers too, which the routes' wait must pass.
if (process.env.ATLAS_TEST_KAFKA_BROKERS) {
  profiles.push({
    name: 'kafka',
    env: {
      KAFKA_BROKERS: process.env.ATLAS_TEST_KAFKA_BROKERS,
      KAFKA_NAMESPACE: `channel-data-${randomUUID().slice(0, 8)}`,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      ...(process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL
        ? { SCHEMA_REGISTRY_URL: process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL }
        : {}),
    },
  });
}

/**
 * DELETE /api/channels/{id}/data and GET/PUT /api/channels/{id}/settings over the embedded profile with the real olake
 * export (302 messages), every projector running (the routes wait for them), then a replay of every projector from
 * the earliest offset ending in the same state.
 */
for (const profile of profiles)
  describe(`channel data and settings (slack-olake, ${profile.name})`, () => {
    let rt: Runtime;
    let app: FastifyInstance;
    let subs: Subscription[];
    let plan: Awaited<ReturnType<typeof planImport>>;
    let help: string;
    let other: string;
    const call = async (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: object) => {
      const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
      return { status: res.statusCode, body: res.json() };
    };
    /** Appends messages as a sync would and waits for every projector. */
    const ingest = async (messages: MessageIngested[]) => {
      await rt.eventLog.append(
        TOPICS.messages,
        messages.map((m) => ({ type: 'MessageIngested' as const, key: m.channelId, data: m })),
      );
      await waitForProjectors(rt);
    };
    const facts = async (messageId: string) =>
      (await rt.documents.listMemories({ channelId: help, page: 1, limit: 10_000 })).rows.filter(
        (r) => r.source_message_id === messageId,
      );
    /** What every store holds for a channel. */
    const snapshot = async (channelId: string) => {
      const channel = await rt.documents.getChannel(channelId);
      const kw = await rt.keyword.search({ query: '*', channelId, limit: 1 });
      const vec = await rt.embeddings!.vectors.search({
        channelId,
        vector: (await rt.embeddings!.embedder.embed(['kafka connector']))[0]!,
        model: rt.embeddings!.embedder.id,
        limit: 1000,
      });
      return {
        messages: channel?.message_count,
        facts: channel?.fact_count,
        links: channel?.entity_count,
        keyword: kw.total,
        vectors: vec.length,
        graph: await rt.graph.counts(channelId),
        wikiPages: await rt.wiki.pageCount(channelId),
      };
    };

    beforeAll(async () => {
      rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', ...profile.env }), { pollIntervalMs: 20 });
      plan = await planImport(OLAKE);
      await appendPlan(rt, plan);
      await drainProjectors(rt, 0, false);
      subs = await startProjectors(rt);
      app = await buildApp(apiPorts(rt));
      const channels = await rt.documents.listChannels();
      help = channels.find((c) => c.name === 'help')!.id;
      other = channels.find((c) => c.id !== help && c.fact_count > 0)!.id;
      await rt.wikiGenerator!.generate(help, 'full');
    }, 240_000);
    afterAll(async () => {
      await Promise.all((subs ?? []).map((s) => s.stop()));
      await app?.close();
      await rt?.graph.truncate().catch(() => undefined); // a Neo4j namespace of this run only
      if (rt?.keyword instanceof ElasticsearchKeywordIndex) await rt.keyword.drop().catch(() => undefined);
      await rt?.close();
    });

    it('GET settings: all enabled and retention null by default; unknown channel 404', async () => {
      expect(await call('GET', `/api/channels/${help}/settings`)).toEqual({
        status: 200,
        body: {
          sync_enabled: true,
          wiki_enabled: true,
          graph_enabled: true,
          fact_extraction_enabled: true,
          retention_days: null,
          digest_enabled: false,
          digest_days: 7,
        },
      });
      const missing = await call('GET', '/api/channels/NOPE/settings');
      expect(missing).toEqual({
        status: 404,
        // Issue 21: one body for an unknown channel everywhere (details.channel_id).
        body: {
          error: { code: 'NOT_FOUND', message: "channel 'NOPE' was not found", details: { channel_id: 'NOPE' } },
        },
      });
      expect((await call('PUT', '/api/channels/NOPE/settings', { wiki_enabled: false })).status).toBe(404);
      expect((await call('DELETE', '/api/channels/NOPE/data')).status).toBe(404);
    });

    it('PUT settings: partial updates merge and answer the full settings; bad bodies are 400 INVALID_REQUEST', async () => {
      const r = await call('PUT', `/api/channels/${other}/settings`, { wiki_enabled: false, retention_days: 30 });
      expect(r).toEqual({
        status: 200,
        body: {
          sync_enabled: true,
          wiki_enabled: false,
          graph_enabled: true,
          fact_extraction_enabled: true,
          retention_days: 30,
          digest_enabled: false,
          digest_days: 7,
        },
      });
      // wiki_enabled off: an on-demand refresh is refused, the scheduler's pass skips the (stale) channel.
      const refresh = await app.inject({ method: 'POST', url: '/api/wiki/refresh', payload: { channel_id: other } });
      expect(refresh.statusCode).toBe(409);
      expect(refresh.json().error.message).toMatch(/wiki_enabled/);
      await rt.wiki.markStale(other);
      await rt.wikiGenerator!.generateStale();
      expect(await rt.wiki.status(other)).toMatchObject({ is_stale: true, current_version: null });
      const r2 = await call('PUT', `/api/channels/${other}/settings`, { retention_days: null, wiki_enabled: true });
      expect(r2.body).toMatchObject({ wiki_enabled: true, retention_days: null });
      expect((await call('GET', `/api/channels/${other}`)).body.settings).toEqual({
        sync_enabled: true,
        wiki_enabled: true,
        graph_enabled: true,
      });
      for (const bad of [{ retention_days: 0 }, { retention_days: 1.5 }, { wiki_enabled: 'no' }, { colour: 'red' }]) {
        const res = await call('PUT', `/api/channels/${other}/settings`, bad);
        expect(res.status, JSON.stringify(bad)).toBe(400);
        expect(res.body.error.code).toBe('INVALID_REQUEST');
        expect(res.body.error.message).toMatch(/body/);
      }
    });

    it('fact_extraction_enabled=false: new messages get no facts; graph_enabled=false: no entities; both honoured on', async () => {
      const base = plan.messages.find((m) => m.channelId === help)!;
      const msg = (n: number, text: string): MessageIngested => ({
        ...base,
        messageId: `00000000-0000-5000-8000-00000000000${n}`,
        platformMessageId: `1900000000.00000${n}`,
        timestamp: new Date(Date.UTC(2030, 0, n)).toISOString(),
        threadTs: null,
        replyToId: null,
        text,
        contentHash: `hash-${n}`,
      });
      const text = 'We decided to migrate the Postgres connector to Debezium next sprint, Alice will own it.';
      await call('PUT', `/api/channels/${help}/settings`, { fact_extraction_enabled: false });
      await ingest([msg(1, text)]);
      expect(await facts('1900000000.000001')).toEqual([]);
      await call('PUT', `/api/channels/${help}/settings`, { fact_extraction_enabled: true, graph_enabled: false });
      await ingest([msg(2, text)]);
      const withFacts = await facts('1900000000.000002');
      expect(withFacts.length).toBeGreaterThan(0);
      const ids = new Set(withFacts.map((f) => f.id));
      const entities = await rt.graph.listEntities({ channelId: help, limit: 10_000 });
      expect(entities.filter((e) => e.source_fact_ids.some((f) => ids.has(f)))).toEqual([]);
      await call('PUT', `/api/channels/${help}/settings`, { graph_enabled: true });
      await ingest([msg(3, text)]);
      const ids3 = new Set((await facts('1900000000.000003')).map((f) => f.id));
      const after = await rt.graph.listEntities({ channelId: help, limit: 10_000 });
      expect(after.filter((e) => e.source_fact_ids.some((f) => ids3.has(f))).length).toBeGreaterThan(0);
    });

    it('DELETE data removes the channel from every store and answers the counts; other channels stay', async () => {
      const before = await snapshot(help);
      const otherBefore = await snapshot(other);
      expect(before.facts).toBeGreaterThan(0);
      expect(before.graph.nodes).toBeGreaterThan(0);
      expect(before.wikiPages).toBeGreaterThan(0);
      const r = await call('DELETE', `/api/channels/${help}/data`);
      expect(r).toEqual({
        status: 200,
        body: {
          deleted_facts: before.facts,
          deleted_entities: before.graph.nodes,
          deleted_wiki_pages: before.wikiPages,
          deleted_messages: before.messages,
        },
      });
      expect(await snapshot(help)).toEqual({
        messages: 0,
        facts: 0,
        links: 0,
        keyword: 0,
        vectors: 0,
        graph: { nodes: 0, relationships: 0 },
        wikiPages: 0,
      });
      expect((await rt.wiki.status(help)).current_version).toBeNull();
      expect(await snapshot(other)).toEqual(otherBefore);
      // The channel and its settings stay; a second deletion deletes nothing.
      expect((await call('GET', `/api/channels/${help}/settings`)).body.graph_enabled).toBe(true);
      expect((await call('DELETE', `/api/channels/${help}/data`)).body).toEqual({
        deleted_facts: 0,
        deleted_entities: 0,
        deleted_wiki_pages: 0,
        deleted_messages: 0,
      });
    });

    it('messages after the deletion are kept, and a replay of every projector from the earliest offset ends the same', async () => {
      const again = plan.messages.filter((m) => m.channelId === help).slice(0, 40);
      await ingest(again);
      await rt.wikiGenerator!.generate(help, 'full'); // generated after the deletion: a replay keeps it
      const expected = { help: await snapshot(help), other: await snapshot(other) };
      expect(expected.help.messages).toBe(40);
      expect(expected.help.wikiPages).toBeGreaterThan(0);
      await Promise.all(subs.map((s) => s.stop()));
      subs = [];
      // Every projector of the knowledge pipeline (those reading atlas.messages, atlas.facts or atlas.graph).
      const pipeline = [TOPICS.messages, TOPICS.facts, TOPICS.graph] as readonly string[];
      for (const p of PROJECTORS.filter((x) => x.topics.some((t) => pipeline.includes(t))))
        await replayProjector(rt, p.name, 'earliest');
      // Replays run one projector at a time: downstream ones read what upstream ones appended again; settle them all.
      subs = await startProjectors(rt);
      await waitForProjectors(rt);
      expect({ help: await snapshot(help), other: await snapshot(other) }).toEqual(expected);
    }, 300_000);
  });
