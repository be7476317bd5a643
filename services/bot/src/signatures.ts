import { createHmac, createPublicKey, type KeyObject, timingSafeEqual, verify } from 'node:crypto';

/** platform_a's replay window: a request whose timestamp is further than this from now is refused, seconds. */
export const REPLAY_WINDOW_SECONDS = 5 * 60;

/**
 * Verifies a platform_a (Slack-like) request signature: `v0=` + hex HMAC-SHA256 under the signing secret of
 * `v0:<timestamp>:<raw body>` (headers `x-slack-signature`, `x-slack-request-timestamp`, timestamp in epoch seconds),
 * refused when the timestamp is more than REPLAY_WINDOW_SECONDS from `nowMs` (epoch ms). Constant-time comparison.
 * Returns false for any missing or malformed part; never throws.
 */
export const verifyPlatformA = (req: {
  secret: string;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
  nowMs?: number;
}): boolean => {
  if (!req.timestamp || !req.signature || !/^\d{1,12}$/.test(req.timestamp)) return false;
  const now = (req.nowMs ?? Date.now()) / 1000;
  if (Math.abs(now - Number(req.timestamp)) > REPLAY_WINDOW_SECONDS) return false;
  const expected = `v0=${createHmac('sha256', req.secret).update(`v0:${req.timestamp}:${req.body}`).digest('hex')}`;
  const a = Buffer.from(expected);
  const b = Buffer.from(req.signature);
  return a.length === b.length && timingSafeEqual(a, b);
};

/** platform_b's application public key (64 hex characters, a raw Ed25519 key) as a Node KeyObject. Throws on bad hex. */
export const platformBPublicKey = (hex: string): KeyObject => {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new TypeError('an Ed25519 public key is 64 hexadecimal characters');
  return createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(hex, 'hex').toString('base64url') },
    format: 'jwk',
  });
};

/**
 * Verifies a platform_b (Discord-like) interaction: the hex Ed25519 signature (`x-signature-ed25519`) of
 * `<x-signature-timestamp><raw body>` under the application's public key. Returns false for any missing or malformed
 * part; never throws. (The platform sends a fresh timestamp with each interaction and expects 401 on a bad signature.)
 */
export const verifyPlatformB = (req: {
  publicKey: KeyObject;
  timestamp: string | undefined;
  signature: string | undefined;
  body: string;
}): boolean => {
  if (!req.timestamp || !req.signature || !/^[0-9a-fA-F]{128}$/.test(req.signature)) return false;
  try {
    return verify(null, Buffer.from(req.timestamp + req.body), req.publicKey, Buffer.from(req.signature, 'hex'));
  } catch {
    return false;
  }
};
