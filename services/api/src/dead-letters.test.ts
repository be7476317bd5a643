import { loadConfig, type NewEvent, TOPICS } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { type FactExtractor, OfflineFactExtractor } from '@atlas/pipeline';
import { apiPorts, openRuntime, type Runtime, startProjectors, waitForProjectors } from '@atlas/runtime';
import { channelEvent, freshChannelId, messageEvent } from '@atlas/stores/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from './app.js';
import { validateResponse } from './contract/index.js';

/** The offline fact extractor, except that while `broken` it throws on any message saying BOOM (a bug, not an outage). */
class BrokenExtractor implements FactExtractor {
  readonly id = 'offline-breakable@1';
  broken = true;
  readonly calls = new Map<string, number>();
  private readonly inner = new OfflineFactExtractor();
  async extract(input: Parameters<FactExtractor['extract']>[0]) {
    this.calls.set(input.message.messageId, (this.calls.get(input.message.messageId) ?? 0) + 1);
    if (this.broken && input.message.text.includes('BOOM')) throw new Error('fact extractor crashed on BOOM');
    return this.inner.extract(input);
  }
}

/**
 * Dead letters (spec "Degraded behaviour": a message whose fact extraction fails goes to the dead-letter queue; items
 * that failed 5 times need manual inspection): a real projector throwing on one message, the others going on, the
 * admin routes listing the item, and a re-drive after the fix processing it once.
 */
describe('dead letters: fact extraction that fails, listed and re-driven', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let subs: Subscription[];
  let extractor: BrokenExtractor;
  const ch = freshChannelId();
  const call = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await app.inject({ method, url, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, body: res.json(), contentType: res.headers['content-type'], raw: res.body };
  };
  /** The answer's issues against the response contract (and so the OpenAPI document) of `route`. */
  const issuesOf = (route: string, res: Awaited<ReturnType<typeof call>>) =>
    validateResponse(route, { status: res.status, contentType: res.contentType?.toString(), raw: res.raw }).issues;
  const message = (sec: number, text: string): NewEvent<'MessageIngested'> => ({
    type: 'MessageIngested',
    key: ch,
    data: messageEvent(ch, 1_700_000_000 + sec, text),
  });
  const factsOf = async (m: NewEvent<'MessageIngested'>) =>
    (await rt.documents.listMemories({ channelId: ch, page: 1, limit: 100 })).rows.filter(
      (r) => r.source_message_id === m.data.platformMessageId,
    ).length;
  const ingest = async (events: NewEvent[]) => {
    await rt.eventLog.append(TOPICS.messages, events);
    await waitForProjectors(rt, undefined, 20);
  };

  const ok1 = message(0, 'We decided to move the billing service to PostgreSQL next sprint.');
  const boom = message(60, 'BOOM: we agreed to deploy the ingest service on Friday with Kafka.');
  const ok2 = message(120, 'Alice will own the migration of the ledger to PostgreSQL by March.');

  beforeAll(async () => {
    rt = await openRuntime(loadConfig({ ATLAS_DATA_DIR: 'memory://', EMBEDDING_PROVIDER: 'none' }), {
      pollIntervalMs: 20,
      sessionTimeoutMs: 1000,
    });
    extractor = new BrokenExtractor();
    rt.extractor = extractor;
    subs = await startProjectors(rt);
    app = await buildApp(apiPorts(rt));
    await ingest([{ type: 'ChannelDiscovered', key: ch, data: channelEvent(ch, 'ops') }, ok1, boom, ok2]);
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await Promise.all((subs ?? []).map((s) => s.stop()));
    await rt?.close();
  });

  it('the failing message stops after 5 attempts; the messages around it are processed', async () => {
    expect(extractor.calls.get(boom.data.messageId)).toBeGreaterThanOrEqual(5);
    expect(await factsOf(ok1)).toBeGreaterThan(0);
    expect(await factsOf(ok2)).toBeGreaterThan(0); // after it in the same partition: the partition went on
    expect(await factsOf(boom)).toBe(0);
  });

  it('GET /api/admin/dead-letters lists it, flagged for manual inspection, with the error and the original event', async () => {
    const list = await call('GET', `/api/admin/dead-letters?channel_id=${ch}`);
    expect(list.status).toBe(200);
    expect(list.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    const [item] = list.body.dead_letters;
    expect(item).toMatchObject({
      group: 'atlas.projector.facts',
      topic: TOPICS.messages,
      event_type: 'MessageIngested',
      key: ch,
      attempts: 5,
      needs_inspection: true,
      redrivable: true,
      status: 'pending',
    });
    expect(item.error).toContain('fact extractor crashed on BOOM');
    const detail = await call('GET', `/api/admin/dead-letters/${item.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.event_data).toMatchObject({
      messageId: boom.data.messageId,
      text: boom.data.text,
    });
    expect(
      (await call('GET', `/api/admin/dead-letters?channel_id=${ch}&needs_inspection=true&group=facts`)).body.total,
    ).toBe(1);
    expect((await call('GET', `/api/admin/dead-letters?channel_id=${ch}&status=redriven`)).body.total).toBe(0);
    expect((await call('GET', '/api/admin/dead-letters/00000000-0000-5000-8000-000000000000')).status).toBe(404);
    expect((await call('GET', '/api/admin/dead-letters?limit=0')).status).toBe(400);
  });

  it('after the fix, a re-drive processes the message once and marks the item re-driven; a second re-drive is 409', async () => {
    const { body } = await call('GET', `/api/admin/dead-letters?channel_id=${ch}`);
    const id = body.dead_letters[0].id as string;
    extractor.broken = false;
    const boomId = boom.data.messageId;
    extractor.calls.clear();
    const res = await call('POST', `/api/admin/dead-letters/${id}/redrive`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id, status: 'redriven', event_type: 'MessageIngested' });
    expect(res.body.redriven_to).toMatchObject({ topic: TOPICS.messages });
    expect(issuesOf('POST /api/admin/dead-letters/:id/redrive', res)).toEqual([]);
    await waitForProjectors(rt, undefined, 20);
    expect(extractor.calls.get(boomId)).toBe(1);
    expect(await factsOf(boom)).toBeGreaterThan(0);
    expect((await call('GET', `/api/admin/dead-letters/${id}`)).body).toMatchObject({
      status: 'redriven',
      needs_inspection: false,
      redriven_to: res.body.redriven_to,
    });
    const again = await call('POST', `/api/admin/dead-letters/${id}/redrive`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('CONFLICT');
    expect((await call('POST', '/api/admin/dead-letters/00000000-0000-5000-8000-000000000000/redrive')).status).toBe(
      404,
    );
  });

  it('POST /api/admin/dead-letters/redrive re-drives every pending item once', async () => {
    extractor.broken = true;
    const more = [
      message(300, 'BOOM one: we decided to move the search index to Elasticsearch next sprint.'),
      message(360, 'BOOM two: Bob will own the rollout of the new billing API to customers by April.'),
    ];
    await ingest(more);
    expect((await call('GET', `/api/admin/dead-letters?channel_id=${ch}&status=pending`)).body.total).toBe(2);
    extractor.broken = false;
    extractor.calls.clear();
    const res = await call('POST', '/api/admin/dead-letters/redrive', { group: 'facts' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ redriven: 2, failed: [], remaining: 0 });
    expect(issuesOf('POST /api/admin/dead-letters/redrive', res)).toEqual([]);
    // The contract refuses an answer that differs from it (a result without where it went).
    const altered = {
      ...res,
      raw: JSON.stringify({ ...res.body, results: [{ ...res.body.results[0], redriven_to: null }] }),
    };
    expect(issuesOf('POST /api/admin/dead-letters/redrive', altered)).not.toEqual([]);
    await waitForProjectors(rt, undefined, 20);
    for (const m of more) {
      expect(extractor.calls.get(m.data.messageId)).toBe(1);
      expect(await factsOf(m)).toBeGreaterThan(0);
    }
    const list = await call('GET', `/api/admin/dead-letters?channel_id=${ch}`);
    expect(list.body.dead_letters.map((d: { status: string }) => d.status)).toEqual([
      'redriven',
      'redriven',
      'redriven',
    ]);
    expect(list.body.counts.needs_inspection).toBe(0);
    expect((await call('POST', '/api/admin/dead-letters/redrive')).body).toMatchObject({ redriven: 0, remaining: 0 });
  });
});
