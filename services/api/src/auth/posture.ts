import { isIP } from 'node:net';
import { AtlasError } from '@atlas/core';

/** Host names a loopback server answers to without ALLOWED_HOSTS (the Host header, port and brackets removed). */
export const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'] as const;

/** True for a HOST only this machine can reach: `localhost`, 127.0.0.0/8, `::1`. `0.0.0.0`, `::` and names are not. */
export const isLoopbackHost = (host: string): boolean => {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return h === '::1' || h === '0:0:0:0:0:0:0:1';
};

/**
 * The server's posture at start (docs/access.md "Default posture"; issue 23, point 2):
 * - `open`: a loopback HOST with no key configured (no ATLAS_ADMIN_API_KEY, no usable stored key): local callers are
 *   let in as admin, and the start says so;
 * - `keys`: every route but GET /api/health needs an API key.
 * Throws AtlasError INVALID_REQUEST (the start refuses) for a non-loopback HOST with no key configured, and for
 * CORS_ORIGINS `*` together with CORS_CREDENTIALS.
 */
export const startPosture = (p: {
  host: string;
  adminKey: string | null | undefined;
  usableKeys: number;
  corsOrigins: readonly string[];
  corsCredentials: boolean;
}): { mode: 'open' | 'keys'; message: string } => {
  if (p.corsCredentials && p.corsOrigins.includes('*'))
    throw new AtlasError(
      'INVALID_REQUEST',
      "CORS_ORIGINS=* with CORS_CREDENTIALS=true would let any web page act with a caller's credentials: name the origins",
    );
  const configured = Boolean(p.adminKey) || p.usableKeys > 0;
  if (configured)
    return {
      mode: 'keys',
      message: `API keys required on ${p.host} (${p.usableKeys} stored key(s)${p.adminKey ? ' and ATLAS_ADMIN_API_KEY' : ''})`,
    };
  if (!isLoopbackHost(p.host))
    throw new AtlasError(
      'INVALID_REQUEST',
      `HOST=${p.host} is reachable from other machines and no API key exists: set ATLAS_ADMIN_API_KEY (at least 32 characters, e.g. openssl rand -base64 32) or run 'atlas keys create --role admin' first`,
    );
  return {
    mode: 'open',
    message: `no API key configured: open to local callers on ${p.host} (create one with 'atlas keys create' to require keys)`,
  };
};
