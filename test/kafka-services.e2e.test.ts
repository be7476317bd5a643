import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '@atlas/core';
import { planImport } from '@atlas/platforms';
import { appendPlan, openRuntime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from './free-port.test-support.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXPORT = path.resolve(ROOT, '../shared/data/slack-clojurians-2018-02/export');
const brokers = process.env.ATLAS_TEST_KAFKA_BROKERS;
const pgUrl = process.env.ATLAS_TEST_POSTGRES_URL;

// Runs when .ci/run lists Kafka (and PostgreSQL, which separate processes share as their document store).
describe.runIf(Boolean(brokers && pgUrl))(
  'services as processes on Kafka: api, documents, keyword and two facts instances',
  () => {
    const id = randomUUID().replaceAll('-', '').slice(0, 12);
    const schema = `t_${id}`;
    let port = 0; // a free one, drawn when the test starts
    const env = {
      ...process.env,
      KAFKA_BROKERS: brokers!,
      KAFKA_NAMESPACE: `e2e-${id}`,
      KAFKA_SESSION_TIMEOUT_MS: '6000',
      DATABASE_URL: `${pgUrl}?options=${encodeURIComponent(`-c search_path=${schema},public`)}`,
      // The data dir's files (the credential master key) in a test folder of their own, not the checkout's ./data.
      ATLAS_DATA_DIR: path.join(ROOT, '.atlas-test', schema),
      LOG_LEVEL: 'warn',
      EMBEDDING_PROVIDER: 'none', // this test is about the log and the projectors; embeddings have their own
      ...(process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL
        ? { SCHEMA_REGISTRY_URL: process.env.ATLAS_TEST_SCHEMA_REGISTRY_URL }
        : {}),
    };
    const children: ChildProcess[] = [];
    const atlas = (...args: string[]) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'bin/atlas.mjs'), ...args], { cwd: ROOT, env });
      children.push(child);
      const out: string[] = [];
      child.stdout.on('data', (d) => out.push(String(d)));
      child.stderr.on('data', (d) => out.push(String(d)));
      return { child, out, ready: () => out.join('').includes('is running') || out.join('').includes('is serving') };
    };
    type Started = ReturnType<typeof atlas>;
    /** Polls fn every 200 ms; fails at once when a watched process exits, and on timeout, with that process's output. */
    const until = async (what: string, fn: () => boolean | Promise<boolean>, ms = 90_000, ...watched: Started[]) => {
      const end = Date.now() + ms;
      const tail = (w: Started) => w.out.join('').slice(-4000);
      while (!(await fn())) {
        const exited = watched.find((w) => w.child.exitCode !== null || w.child.signalCode !== null);
        if (exited)
          throw new Error(
            `waiting for ${what}: the process exited (${exited.child.exitCode}); it printed:\n${tail(exited)}`,
          );
        if (Date.now() > end)
          throw new Error(
            `timed out waiting for ${what}${watched.map((w) => `; a process printed:\n${tail(w)}`).join('')}`,
          );
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    const api = async <T>(p: string, body?: object): Promise<T> => {
      const res = await fetch(
        `http://127.0.0.1:${port}${p}`,
        body ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) } : {},
      );
      return (await res.json()) as T;
    };

    afterAll(async () => {
      for (const c of children) c.kill('SIGKILL');
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`drop schema if exists "${schema}" cascade`);
      await c.end();
      await rm(env.ATLAS_DATA_DIR, { recursive: true, force: true });
    });

    it('imports a real export through Kafka; a facts instance killed mid-batch loses nothing and duplicates nothing', async () => {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`create schema "${schema}"`);
      await c.end();
      port = await freePort();
      const server = atlas('run', 'api', '--port', String(port));
      await until('the api', server.ready, 180_000, server);
      const services = [atlas('run', 'documents'), atlas('run', 'keyword')];
      const factsA = atlas('run', 'facts');
      const factsB = atlas('run', 'facts');
      // Four processes start at once (each loads the sources through tsx and joins its consumer group): slow beside the
      // other suites in CI.
      await until(
        'the projectors',
        () => [...services, factsA, factsB].every((s) => s.ready()),
        240_000,
        ...services,
        factsA,
        factsB,
      );

      const imported = atlas('import', EXPORT, '--no-project', '--no-progress');
      await until('the import', () => imported.child.exitCode !== null, 120_000);
      expect(imported.out.join('')).toMatch(/82 channels, 7896 messages \(7896 new or changed/);

      type Metrics = {
        event_log: { kind: string; consumer_groups: { group: string; lag: number; committed_offset: number | null }[] };
      };
      const factsLag = async () =>
        (await api<Metrics>('/api/stats/metrics')).event_log.consumer_groups.filter(
          (g) => g.group === 'atlas.projector.facts',
        );
      // Kill one facts instance once projection is under way but not done.
      await until(
        'facts projection under way',
        async () => (await factsLag()).some((g) => (g.committed_offset ?? 0) > 0),
        60_000,
      );
      factsA.child.kill('SIGKILL');
      await until(
        'every projector caught up',
        async () => {
          const m = await api<Metrics>('/api/stats/metrics');
          // The groups of the processes started here (entities and graph are not: this test is about facts).
          const ours = m.event_log.consumer_groups.filter((g) =>
            ['documents', 'keyword', 'facts'].some((n) => g.group === `atlas.projector.${n}`),
          );
          return ours.length > 0 && ours.every((g) => g.lag === 0);
        },
        180_000,
      );
      expect((await api<Metrics>('/api/stats/metrics')).event_log.kind).toBe('kafka');

      // The same import on the embedded profile, in this process, is the reference.
      const ref = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }));
      await appendPlan(ref, await planImport(EXPORT));
      const subs = await startProjectors(ref);
      await waitForProjectors(ref);
      await Promise.all(subs.map((s) => s.stop()));
      const refFacts = (
        await sql<{ id: string }>`select id from memories order by id`.execute(ref.database.db)
      ).rows.map((r) => r.id);
      await ref.close();

      const db = new pg.Client({ connectionString: env.DATABASE_URL });
      await db.connect();
      const facts = (await db.query<{ id: string }>('select id from memories order by id')).rows.map((r) => r.id);
      const messages = Number((await db.query('select count(*) from messages')).rows[0].count);
      const indexed = Number((await db.query('select count(*) from keyword_facts')).rows[0].count);
      await db.end();
      expect(messages).toBe(7896);
      expect(facts.length).toBe(refFacts.length);
      expect(facts).toEqual(refFacts);
      expect(indexed).toBe(facts.length);

      const found = await api<{ results: { highlights: string[] }[]; search_method: string }>('/api/search', {
        query: 'core.async channel',
        channel_id: null,
      });
      expect(found.results.length).toBeGreaterThan(0);
      expect(found.results[0]!.highlights.join(' ')).toMatch(/<mark>/);
    }, 900_000);
  },
);
