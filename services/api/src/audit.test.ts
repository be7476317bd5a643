import { loadConfig } from '@atlas/core';
import type { Subscription } from '@atlas/eventlog';
import { apiPorts, openRuntime, type Runtime, startProjector } from '@atlas/runtime';
import { waitFor } from '@atlas/stores/testing';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildApp } from './app.js';
import { ErrorBodySchema } from './contract/index.js';

const ADMIN_KEY = 'bootstrap-admin-key-for-the-audit-trail-test';

/** The documented shape of GET /api/admin/audit (docs/access.md "Audit trail"). */
const AuditPageSchema = z.strictObject({
  entries: z.array(
    z.strictObject({
      id: z.uuid(),
      action: z.enum(['key_used', 'access_denied', 'admin_action']),
      principal: z.string().nullable(),
      key_id: z.string().nullable(),
      method: z.string(),
      route: z.string(),
      status: z.number().int().nullable(),
      address: z.string(),
      reason: z.string().nullable(),
      at: z.iso.datetime(),
    }),
  ),
  next_cursor: z.string().nullable(),
});
type AuditPage = z.infer<typeof AuditPageSchema>;

/**
 * Issue 23 point 8: admin actions, key use and denials go through the real API on the real runtime (embedded log,
 * in-memory PGlite), are appended as AuditRecorded on atlas.audit, folded by the audit projector, and read back from
 * GET /api/admin/audit.
 */
describe('the audit trail: real requests → atlas.audit → audit projector → GET /api/admin/audit', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  let sub: Subscription;
  const admin = { authorization: `Bearer ${ADMIN_KEY}` };
  let reader: { secret: string; key_id: string };

  const audit = async (query = ''): Promise<AuditPage> => {
    const r = await app.inject({ method: 'GET', url: `/api/admin/audit${query}`, headers: admin });
    expect(r.statusCode, r.body).toBe(200);
    return AuditPageSchema.parse(r.json());
  };

  beforeAll(async () => {
    rt = await openRuntime(
      loadConfig({ ATLAS_DATA_DIR: 'memory://', ATLAS_ADMIN_API_KEY: ADMIN_KEY, EMBEDDING_PROVIDER: 'none' }),
      { pollIntervalMs: 20 },
    );
    sub = await startProjector(rt, 'audit');
    app = await buildApp(apiPorts(rt));
    // Given: an admin creates a reader key through the API (an admin action) ...
    const created = await app.inject({
      method: 'POST',
      url: '/api/admin/keys',
      headers: admin,
      payload: { name: 'audit-reader', role: 'reader' },
    });
    expect(created.statusCode).toBe(201);
    reader = { secret: created.json().secret, key_id: created.json().key.key_id };
    const as = (secret: string) => ({ authorization: `Bearer ${secret}` });
    // ... the key is used, then used for an admin route (403), and callers without a valid key are refused (401).
    expect((await app.inject({ method: 'GET', url: '/api/channels', headers: as(reader.secret) })).statusCode).toBe(
      200,
    );
    expect((await app.inject({ method: 'GET', url: '/api/admin/keys', headers: as(reader.secret) })).statusCode).toBe(
      403,
    );
    expect((await app.inject({ method: 'GET', url: '/api/channels' })).statusCode).toBe(401);
    expect((await app.inject({ method: 'GET', url: '/api/channels', headers: as('atlas_nobody') })).statusCode).toBe(
      401,
    );
    // When the projector has folded them: five entries.
    await waitFor(async () => (await audit()).entries.length >= 5, 'five audit entries');
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await sub?.stop();
    await rt?.close();
  });

  it('reads back each entry, newest first, with the event id and the documented fields', async () => {
    const { entries, next_cursor } = await audit();
    expect(next_cursor).toBeNull();
    // Requests answered within one millisecond share `at`: compare as a set, then check the order separately.
    const row = (e: AuditPage['entries'][number]) => [e.action, e.principal, e.status, e.reason].join(' ');
    expect(entries.map(row).sort()).toEqual(
      [
        'access_denied  401 unknown',
        'access_denied  401 missing',
        'access_denied audit-reader 403 role reader below admin',
        'key_used audit-reader  ',
        'admin_action bootstrap 201 ',
      ].sort(),
    );
    const of = (action: string, status: number | null) =>
      entries.find((e) => e.action === action && e.status === status);
    expect(of('admin_action', 201)).toMatchObject({
      method: 'POST',
      route: '/api/admin/keys',
      key_id: null,
      address: '127.0.0.1',
    });
    expect(of('key_used', null)).toMatchObject({ key_id: reader.key_id, method: 'GET', route: '/api/channels' });
    expect(of('access_denied', 403)).toMatchObject({ key_id: reader.key_id, route: '/api/admin/keys' });
    expect(new Set(entries.map((e) => e.id)).size).toBe(5);
    // Newest first: by `at`, ties by id.
    const key = (e: AuditPage['entries'][number]) => `${e.at}|${e.id}`;
    expect([...entries].sort((a, b) => key(b).localeCompare(key(a)))).toEqual(entries);
    // The admin action came first, so it is the oldest.
    expect(entries.every((e) => e.at >= of('admin_action', 201)!.at)).toBe(true);
  });

  it('filters by action, principal and time', async () => {
    const all = (await audit()).entries;
    expect((await audit('?action=access_denied')).entries.map((e) => e.status).sort()).toEqual([401, 401, 403]);
    expect((await audit('?principal=audit-reader')).entries.map((e) => e.action).sort()).toEqual([
      'access_denied',
      'key_used',
    ]);
    expect((await audit('?action=admin_action&principal=bootstrap')).entries).toHaveLength(1);
    const oldest = all.find((e) => e.action === 'admin_action')!.at;
    expect((await audit(`?until=${encodeURIComponent(oldest)}`)).entries).toEqual([]);
    expect((await audit(`?since=${encodeURIComponent(oldest)}&action=admin_action`)).entries).toHaveLength(1);
    expect((await audit(`?since=${encodeURIComponent(oldest)}`)).entries).toHaveLength(all.length);
  });

  it('pages with next_cursor, no entry repeated or skipped', async () => {
    const all = (await audit()).entries.map((e) => e.id);
    const seen: string[] = [];
    let query = '?limit=2';
    for (;;) {
      const page = await audit(query);
      seen.push(...page.entries.map((e) => e.id));
      if (!page.next_cursor) break;
      query = `?limit=2&cursor=${encodeURIComponent(page.next_cursor)}`;
    }
    expect(seen).toEqual(all);
  });

  it.each([
    ['a limit of 0', '?limit=0'],
    ['a limit above 200', '?limit=201'],
    ['an unknown action', '?action=key_made'],
    ['a time that is not ISO 8601', '?since=yesterday'],
    ['since after until', '?since=2026-03-02T00:00:00Z&until=2026-03-01T00:00:00Z'],
    ['a cursor no page gave', '?cursor=bm90LWEtY3Vyc29y'],
  ])('400 INVALID_REQUEST with the shared error body for %s', async (_, query) => {
    const r = await app.inject({ method: 'GET', url: `/api/admin/audit${query}`, headers: admin });
    expect(r.statusCode).toBe(400);
    expect(ErrorBodySchema.parse(r.json()).error.code).toBe('INVALID_REQUEST');
  });

  it('is for admins only: a reader is refused 403 (and that refusal is itself recorded)', async () => {
    const r = await app.inject({
      method: 'GET',
      url: '/api/admin/audit',
      headers: { authorization: `Bearer ${reader.secret}` },
    });
    expect(r.statusCode).toBe(403);
    await waitFor(
      async () => (await audit('?action=access_denied')).entries.some((e) => e.route === '/api/admin/audit'),
      'the refusal recorded',
    );
  });
});
