import { createHash, timingSafeEqual } from 'node:crypto';
import { type ErrorCode, errorBody, type Principal, parsePlatformIdentity, roleAllows } from '@atlas/core';
import type { ApiKeyRecord, ApiKeyStore, AuditEntryRecord } from '@atlas/stores';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { type RouteAccess, routeAccess } from './policy.js';
import { isLoopbackHost, LOOPBACK_NAMES } from './posture.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller (auth.ts): null on a public route called without credentials, and before the auth hook ran. */
    principal: Principal | null;
  }
  interface FastifyContextConfig {
    /** The access a route declares for itself (the web UI's shell, routes/web.ts), else policy.ts decides. */
    access?: RouteAccess;
  }
}

/** The header the bot sends BRIDGE_API_KEY in (spec "Authentication" 3). */
export const BRIDGE_KEY_HEADER = 'x-atlas-bridge-key';
/** The header the bot names the platform user it acts for in: `<platform>:<user id>`, e.g. `platform_a:U024BE7LH`. */
export const BRIDGE_USER_HEADER = 'x-atlas-platform-user';

/** Defaults of the rate limits (docs/access.md "Rate limits"): requests per minute. */
export const RATE_LIMIT_DEFAULTS = { perAddressPerMinute: 1200, perKeyPerMinute: 600 } as const;

/**
 * One entry of the audit trail (docs/access.md "Audit trail"), handed to AuthOptions.audit: the stored record without
 * its id (the runtime gives one at the append, AuditRecorded).
 */
export type AuditEntry = Omit<AuditEntryRecord, 'id'>;

/** What the auth hook reads (docs/access.md). */
export interface AuthOptions {
  /** The API key store; null: no stored keys (only ATLAS_ADMIN_API_KEY, or the open loopback default). */
  keys: Pick<ApiKeyStore, 'check' | 'touch' | 'countUsable'> | null;
  /** ATLAS_ADMIN_API_KEY: the bootstrap admin key (at least 32 characters; checked by loadConfig). */
  adminKey?: string | null;
  /** BRIDGE_API_KEY: the bot's key; unset: every bridge header is refused (fail closed). */
  bridgeKey?: string | null;
  /** HOST the server listens on: a loopback host with no key configured is the open local default. */
  host?: string;
  /** Further names the Host header may carry (ALLOWED_HOSTS); on a loopback HOST only loopback names pass otherwise. */
  allowedHosts?: readonly string[];
  /** Requests per minute per client address (before authentication) and per principal (after it). */
  rateLimit?: { perAddressPerMinute: number; perKeyPerMinute: number };
  /** The shared store of the rate limits when several processes serve the API (REDIS_URL); else in memory. */
  redis?: Redis | null;
  /** METRICS_PUBLIC: GET /metrics answers without a key (else admins only, policy.ts). */
  publicMetrics?: boolean;
  /** Where audit entries go (the runtime appends them to the event log); absent: nowhere. */
  audit?: ((entry: AuditEntry) => void) | null;
  now?: () => Date;
}

const digest = (s: string) => createHash('sha256').update(s).digest();
/** Constant-time equality of two strings (of their SHA-256 digests, so lengths leak nothing). */
const sameSecret = (a: string, want: Buffer) => timingSafeEqual(digest(a), want);

/** How long the "is any key configured" answer is kept, ms (a key created meanwhile closes the open default within it). */
const OPEN_CHECK_MS = 2_000;
/** last_used_at and `key_used` audit entries are written at most this often per key, ms. */
const TOUCH_EVERY_MS = 60_000;

const limiter = (redis: Redis | null | undefined, keyPrefix: string, points: number): RateLimiterAbstract =>
  redis
    ? new RateLimiterRedis({
        storeClient: redis,
        keyPrefix,
        points,
        duration: 60,
        insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
      })
    : new RateLimiterMemory({ keyPrefix, points, duration: 60 });

const header = (r: FastifyRequest, name: string): string | undefined => {
  const v = r.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/** The principal of a stored key. */
export const keyPrincipal = (k: ApiKeyRecord): Principal => ({
  kind: 'key',
  key_id: k.key_id,
  name: k.name,
  role: k.role,
  identity: k.identity,
  scope: k.scope,
});

type Outcome = { principal: Principal } | { status: 401 | 403; code: ErrorCode; message: string; reason: string };

/**
 * Identity and access at the edge (docs/access.md; issue 23): an onRequest hook, before any route runs, that
 * 1. refuses a Host header outside the allow-list on a loopback HOST (DNS rebinding): 403 FORBIDDEN;
 * 2. limits requests per client address (429 RATE_LIMIT_EXCEEDED with Retry-After);
 * 3. finds the caller: `x-atlas-bridge-key` (BRIDGE_API_KEY, constant time; unset → refused) acting for the user of
 *    `x-atlas-platform-user`; `Authorization: Bearer <key>` (ATLAS_ADMIN_API_KEY, or a stored key by its hash); no
 *    credential on a loopback HOST with no key configured: the open local default (role admin); else 401 with
 *    `WWW-Authenticate: Bearer` (missing, malformed, wrong, revoked or expired);
 * 4. checks the route's access (policy.ts routeAccess): a role below it is 403 FORBIDDEN;
 * 5. limits requests per principal (429), records key use (last_used_at, throttled) and denials in the audit trail.
 * GET /api/health is public. Sets `request.principal`.
 */
export const registerAuth = (app: FastifyInstance, opts: AuthOptions): void => {
  const now = opts.now ?? (() => new Date());
  const host = opts.host ?? '127.0.0.1';
  const loopback = isLoopbackHost(host);
  const allowed = new Set([...LOOPBACK_NAMES, ...(opts.allowedHosts ?? [])].map((h) => h.toLowerCase()));
  const checkHost = loopback || (opts.allowedHosts?.length ?? 0) > 0;
  const adminDigest = opts.adminKey ? digest(opts.adminKey) : null;
  const bridgeDigest = opts.bridgeKey ? digest(opts.bridgeKey) : null;
  const limits = opts.rateLimit ?? RATE_LIMIT_DEFAULTS;
  const byAddress = limiter(opts.redis, 'atlas:rl:addr', limits.perAddressPerMinute);
  const byKey = limiter(opts.redis, 'atlas:rl:key', limits.perKeyPerMinute);
  const touched = new Map<string, number>();
  let openUntil = 0;
  let openCached = false;

  /** True while the open local default holds: loopback HOST, no ATLAS_ADMIN_API_KEY, no usable stored key. */
  const isOpen = async (): Promise<boolean> => {
    if (!loopback || adminDigest) return false;
    if (!opts.keys) return true;
    const t = Date.now();
    if (t < openUntil) return openCached;
    openCached = (await opts.keys.countUsable(now())) === 0;
    openUntil = t + OPEN_CHECK_MS;
    return openCached;
  };

  const audit = (r: FastifyRequest, e: Omit<AuditEntry, 'method' | 'route' | 'address' | 'at'>) =>
    opts.audit?.({
      ...e,
      method: r.method,
      route: r.routeOptions.url ?? r.url,
      address: r.ip,
      at: now().toISOString(),
    });

  const refuse = (reply: FastifyReply, status: number, code: ErrorCode, message: string, details?: object) => {
    if (status === 401) reply.header('www-authenticate', 'Bearer realm="atlas"');
    return reply.status(status).send(errorBody(code, message, details as Record<string, unknown> | undefined));
  };

  const limited = async (l: RateLimiterAbstract, key: string, reply: FastifyReply): Promise<boolean> => {
    try {
      await l.consume(key);
      return false;
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      const retryAfter = Math.max(1, Math.ceil(err.msBeforeNext / 1000));
      reply.header('retry-after', String(retryAfter));
      await refuse(reply, 429, 'RATE_LIMIT_EXCEEDED', `too many requests: retry in ${retryAfter} s`, {
        retry_after: retryAfter,
      });
      return true;
    }
  };

  const authenticate = async (r: FastifyRequest): Promise<Outcome | null> => {
    const bridge = header(r, BRIDGE_KEY_HEADER);
    if (bridge !== undefined) {
      if (!bridgeDigest || !sameSecret(bridge, bridgeDigest))
        return {
          status: 401,
          code: 'UNAUTHORIZED',
          message: bridgeDigest
            ? `the ${BRIDGE_KEY_HEADER} header does not match BRIDGE_API_KEY`
            : `BRIDGE_API_KEY is not set: the ${BRIDGE_KEY_HEADER} header is refused`,
          reason: 'bridge_key',
        };
      const identity = parsePlatformIdentity(header(r, BRIDGE_USER_HEADER));
      return {
        principal: {
          kind: 'bridge',
          key_id: null,
          name: identity ? `bridge:${identity.platform}:${identity.user_id}` : 'bridge',
          role: 'member',
          identity,
          scope: null,
        },
      };
    }
    const authz = header(r, 'authorization');
    if (authz === undefined) return null;
    const m = /^Bearer ([\x21-\x7e]{1,512})$/i.exec(authz.trim());
    if (!m)
      return {
        status: 401,
        code: 'UNAUTHORIZED',
        message: 'the Authorization header must be "Bearer <API key>"',
        reason: 'malformed',
      };
    const secret = m[1]!;
    if (adminDigest && sameSecret(secret, adminDigest))
      return {
        principal: { kind: 'bootstrap', key_id: null, name: 'bootstrap', role: 'admin', identity: null, scope: null },
      };
    const check = opts.keys ? await opts.keys.check(secret, now()) : ({ ok: false, reason: 'unknown' } as const);
    if (!check.ok)
      return {
        status: 401,
        code: 'UNAUTHORIZED',
        message:
          check.reason === 'unknown'
            ? 'the API key is not valid'
            : `the API key was ${check.reason === 'revoked' ? 'revoked' : 'valid until its expiry'}`,
        reason: check.reason,
      };
    return { principal: keyPrincipal(check.key) };
  };

  app.decorateRequest('principal', null);
  app.addHook('onRequest', async (request, reply) => {
    if (checkHost) {
      const name = (request.headers.host ?? '')
        .replace(/:\d+$/, '')
        .replace(/^\[|\]$/g, '')
        .toLowerCase();
      if (!allowed.has(name))
        return refuse(
          reply,
          403,
          'FORBIDDEN',
          `the Host header '${name.slice(0, 100)}' is not allowed (ALLOWED_HOSTS)`,
        );
    }
    if (await limited(byAddress, request.ip, reply)) return reply;
    const route = request.routeOptions.url;
    if (route === undefined) return; // no such route: the 404/405 handler answers
    // A route may declare its own access (`config.access`: the web UI's shell, routes/web.ts); else the policy table.
    const declared = request.routeOptions.config?.access;
    const access =
      declared ?? (opts.publicMetrics && route === '/metrics' ? 'public' : routeAccess(request.method, route));
    const outcome = await authenticate(request);
    if (outcome && 'status' in outcome && access === 'public') return; // a public route answers whatever was sent
    if (outcome && 'status' in outcome) {
      audit(request, { action: 'access_denied', principal: null, key_id: null, status: 401, reason: outcome.reason });
      return refuse(reply, outcome.status, outcome.code, outcome.message);
    }
    let principal = outcome?.principal ?? null;
    if (!principal && access !== 'public') {
      if (await isOpen())
        principal = { kind: 'local', key_id: null, name: 'local', role: 'admin', identity: null, scope: null };
      else {
        audit(request, { action: 'access_denied', principal: null, key_id: null, status: 401, reason: 'missing' });
        return refuse(reply, 401, 'UNAUTHORIZED', 'an API key is required: send "Authorization: Bearer <API key>"');
      }
    }
    request.principal = principal;
    if (!principal) return;
    if (access !== 'public' && !roleAllows(principal.role, access)) {
      audit(request, {
        action: 'access_denied',
        principal: principal.name,
        key_id: principal.key_id,
        status: 403,
        reason: `role ${principal.role} below ${access}`,
      });
      return refuse(reply, 403, 'FORBIDDEN', `this needs the ${access} role; the key holds ${principal.role}`);
    }
    if (principal.kind !== 'local' && (await limited(byKey, principal.key_id ?? principal.name, reply))) return reply;
    if (principal.key_id) {
      const id = principal.key_id;
      const t = Date.now();
      if ((touched.get(id) ?? 0) + TOUCH_EVERY_MS <= t) {
        touched.set(id, t);
        audit(request, { action: 'key_used', principal: principal.name, key_id: id, status: null, reason: null });
        opts.keys?.touch(id, now()).catch((err) => request.log.warn({ err }, 'last_used_at not written'));
      }
    }
  });
  if (opts.audit)
    app.addHook('onResponse', async (request, reply) => {
      const p = request.principal;
      const route = request.routeOptions.url;
      if (!p || !route || request.method === 'GET' || reply.statusCode >= 400) return;
      if (routeAccess(request.method, route) !== 'admin') return;
      audit(request, {
        action: 'admin_action',
        principal: p.name,
        key_id: p.key_id,
        status: reply.statusCode,
        reason: null,
      });
    });
};
