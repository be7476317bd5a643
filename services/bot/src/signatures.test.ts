import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { platformBPublicKey, verifyPlatformA, verifyPlatformB } from './signatures.js';

describe('platform_a request signature (v0 HMAC-SHA256, 5-minute replay window)', () => {
  // The platform's documented example: secret, timestamp, body and the signature it sends.
  const secret = '8f742231b10e8888abcd99yyyzzz85a5';
  const body =
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
  const ts = '1531420618';
  const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
  const at = (s: number) => s * 1000;

  it('accepts the documented example within the window and refuses it outside, or altered', () => {
    expect(verifyPlatformA({ secret, timestamp: ts, signature, body, nowMs: at(1531420618 + 60) })).toBe(true);
    expect(verifyPlatformA({ secret, timestamp: ts, signature, body, nowMs: at(1531420618 + 301) })).toBe(false);
    expect(verifyPlatformA({ secret, timestamp: ts, signature, body, nowMs: at(1531420618 - 301) })).toBe(false);
    expect(verifyPlatformA({ secret, timestamp: ts, signature, body: `${body}x`, nowMs: at(1531420618) })).toBe(false);
    expect(verifyPlatformA({ secret: `${secret}x`, timestamp: ts, signature, body, nowMs: at(1531420618) })).toBe(
      false,
    );
  });

  it('refuses missing or malformed parts without throwing', () => {
    const nowMs = at(1531420618);
    expect(verifyPlatformA({ secret, timestamp: undefined, signature, body, nowMs })).toBe(false);
    expect(verifyPlatformA({ secret, timestamp: ts, signature: undefined, body, nowMs })).toBe(false);
    expect(verifyPlatformA({ secret, timestamp: 'soon', signature, body, nowMs })).toBe(false);
    expect(verifyPlatformA({ secret, timestamp: ts, signature: 'v0=short', body, nowMs })).toBe(false);
    const own = `v0=${createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex')}`;
    expect(own).toBe(signature);
  });
});

describe('platform_b interaction signature (Ed25519 over timestamp + body)', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const hex = Buffer.from((publicKey.export({ format: 'jwk' }) as { x: string }).x, 'base64url').toString('hex');
  const key = platformBPublicKey(hex);
  const body = '{"type":1}';
  const timestamp = '1700000000';
  const signature = sign(null, Buffer.from(timestamp + body), privateKey).toString('hex');

  it('accepts a signature of the key pair, refuses another key, another body or another timestamp', () => {
    expect(verifyPlatformB({ publicKey: key, timestamp, signature, body })).toBe(true);
    const other = generateKeyPairSync('ed25519');
    const forged = sign(null, Buffer.from(timestamp + body), other.privateKey).toString('hex');
    expect(verifyPlatformB({ publicKey: key, timestamp, signature: forged, body })).toBe(false);
    expect(verifyPlatformB({ publicKey: key, timestamp, signature, body: '{"type":2}' })).toBe(false);
    expect(verifyPlatformB({ publicKey: key, timestamp: '1700000001', signature, body })).toBe(false);
  });

  it('refuses missing or malformed signatures without throwing; a bad public key is a TypeError', () => {
    expect(verifyPlatformB({ publicKey: key, timestamp: undefined, signature, body })).toBe(false);
    expect(verifyPlatformB({ publicKey: key, timestamp, signature: 'zz', body })).toBe(false);
    expect(verifyPlatformB({ publicKey: key, timestamp, signature: '0'.repeat(128), body })).toBe(false);
    expect(() => platformBPublicKey('abc')).toThrow(TypeError);
  });
});
