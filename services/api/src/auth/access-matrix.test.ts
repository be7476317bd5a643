import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig, type Role, roleAllows } from '@atlas/core';
import { apiPorts, openRuntime, type Runtime } from '@atlas/runtime';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../app.js';
import { DOCUMENTED_ROUTE_ADDITIONS, ROUTES_NOT_BUILT_YET } from '../contract/routes.js';
import { BRIDGE_KEY_HEADER, BRIDGE_USER_HEADER } from './auth.js';
import { routeAccess } from './policy.js';

const ENDPOINTS = path.resolve(import.meta.dirname, '../../../../../shared/spec/endpoints.txt');
const ADMIN_KEY = 'bootstrap-admin-key-for-the-access-matrix-test';
const BRIDGE_KEY = 'bridge-key-for-the-access-matrix-test';

/** Every route of the contract and every documented addition, as `METHOD /path/{param}`. */
const ROUTES = [
  ...readFileSync(ENDPOINTS, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean),
  ...DOCUMENTED_ROUTE_ADDITIONS.map((a) => a.route),
].filter((r) => !ROUTES_NOT_BUILT_YET.some((n) => n.route === r)); // named with their issue; the route-shape suite fails once one is served

/** A concrete URL for a route pattern (ids that need not exist: the route's own answer is whatever it is). */
const concrete = (route: string): { method: string; url: string; pattern: string } => {
  const [method, p] = route.split(' ') as [string, string];
  const url = p.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name === 'type' ? 'entities' : name === 'entity_type' ? 'person' : name === 'version_number' ? '1' : `x-${name}`,
  );
  return { method, url, pattern: p.replace(/\{([^}]+)\}/g, ':$1') };
};

type Caller = { name: string; headers: Record<string, string>; role: Role | null };

/**
 * Identity and access, issue 23 "Done when": a route × caller matrix over all 77 routes of endpoints.txt and the
 * documented additions (the SSE ask stream and the uploads among them), on the real runtime (embedded, memory data
 * dir) with stored keys of each role, a revoked and an expired key, the bootstrap key and the bridge.
 */
describe('access matrix: every route × every kind of caller', () => {
  let rt: Runtime;
  let app: FastifyInstance;
  const callers: Caller[] = [];
  beforeAll(async () => {
    rt = await openRuntime(
      loadConfig({
        ATLAS_DATA_DIR: 'memory://',
        ADAPTER_MOCK: 'true',
        EMBEDDING_PROVIDER: 'local',
        ATLAS_ADMIN_API_KEY: ADMIN_KEY,
        BRIDGE_API_KEY: BRIDGE_KEY,
        RATE_LIMIT_PER_ADDRESS_PER_MIN: '100000',
        PLATFORM_A_API_URL: 'http://127.0.0.1:9/api/',
        PLATFORM_B_API_URL: 'http://127.0.0.1:9/api/',
      }),
      { pollIntervalMs: 20 },
    );
    app = await buildApp({ ...apiPorts(rt), settleMs: 50 });
    const key = async (role: Role, extra: { expires_at?: string } = {}) =>
      (await rt.apiKeys.create({ name: `matrix-${role}`, role, ...extra })).secret;
    const revoked = await rt.apiKeys.create({ name: 'matrix-revoked', role: 'admin' });
    await rt.apiKeys.revoke(revoked.key.key_id);
    const expired = await rt.apiKeys.create({
      name: 'matrix-expired',
      role: 'admin',
      expires_at: '2020-01-01T00:00:00Z',
    });
    const bearer = (k: string) => ({ authorization: `Bearer ${k}` });
    callers.push(
      { name: 'no key', headers: {}, role: null },
      { name: 'malformed', headers: { authorization: 'Basic YWRtaW46YWRtaW4=' }, role: null },
      { name: 'wrong', headers: bearer('atlas_not-a-key-anyone-made'), role: null },
      { name: 'revoked', headers: bearer(revoked.secret), role: null },
      { name: 'expired', headers: bearer(expired.secret), role: null },
      { name: 'wrong bridge key', headers: { [BRIDGE_KEY_HEADER]: 'nope' }, role: null },
      { name: 'reader', headers: bearer(await key('reader')), role: 'reader' },
      { name: 'member', headers: bearer(await key('member')), role: 'member' },
      { name: 'admin', headers: bearer(await key('admin')), role: 'admin' },
      { name: 'bootstrap admin', headers: bearer(ADMIN_KEY), role: 'admin' },
      {
        name: 'bridge',
        headers: { [BRIDGE_KEY_HEADER]: BRIDGE_KEY, [BRIDGE_USER_HEADER]: 'platform_a:U0MATRIX' },
        role: 'member',
      },
    );
  }, 120_000);
  afterAll(async () => {
    await app?.close();
    await rt?.close();
  });

  it('covers every route the API serves', () => {
    expect(ROUTES.length).toBe(77 + DOCUMENTED_ROUTE_ADDITIONS.length - ROUTES_NOT_BUILT_YET.length);
    for (const r of ROUTES)
      expect(app.hasRoute({ method: r.split(' ')[0] as 'GET', url: concrete(r).pattern }), `${r} is served`).toBe(true);
  });

  it("answers each caller as its role allows: 401 without a valid credential, 403 below the route's role, the route itself otherwise", async () => {
    const wrong: string[] = [];
    for (const r of ROUTES) {
      const { method, url, pattern } = concrete(r);
      const access = routeAccess(method, pattern);
      for (const c of callers) {
        const res = await app.inject({
          method: method as 'GET',
          url,
          headers: {
            ...c.headers,
            ...(method === 'GET' || method === 'DELETE' ? {} : { 'content-type': 'application/json' }),
          },
          ...(method === 'GET' || method === 'DELETE' ? {} : { payload: '{}' }),
        });
        const s = res.statusCode;
        let ok: boolean;
        let want: string;
        if (access === 'public') {
          ok = s === 200;
          want = '200';
        } else if (c.role === null) {
          ok = s === 401 && String(res.headers['www-authenticate'] ?? '').startsWith('Bearer');
          want = '401 + WWW-Authenticate: Bearer';
        } else if (!roleAllows(c.role, access)) {
          ok = s === 403 && res.json().error.code === 'FORBIDDEN';
          want = '403 FORBIDDEN';
        } else {
          ok = s !== 401 && s !== 403 && s < 500;
          want = 'the route (not 401/403/5xx)';
        }
        if (!ok) wrong.push(`${c.name} ${method} ${url}: ${s}, want ${want} (${res.body.slice(0, 120)})`);
      }
    }
    expect(wrong).toEqual([]);
  }, 300_000);

  it('GET /api/health answers a caller without a key with statuses only (the spec fields, no counts, no names of data)', async () => {
    const res = await app.inject({ method: 'GET', url: '/api/health' });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    for (const k of Object.keys(body)) expect(['status', 'dependencies', 'uptime', 'degraded_since']).toContain(k);
    for (const v of Object.values(body.dependencies as Record<string, unknown>))
      expect(['healthy', 'failing', 'degraded']).toContain(v);
  });
});
