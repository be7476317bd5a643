import { loadConfig, parsePlatformIdentity } from '@atlas/core';
import { describe, expect, it } from 'vitest';
import { createKeyCommand, parseExpiry } from './keys.js';

describe('atlas keys: arguments', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  it('reads --expires as days or an ISO time in the future', () => {
    expect(parseExpiry(undefined, now)).toBeNull();
    expect(parseExpiry('30d', now)).toBe('2026-01-31T00:00:00.000Z');
    expect(parseExpiry('2026-06-01T12:00:00Z', now)).toBe('2026-06-01T12:00:00.000Z');
    for (const bad of ['yesterday', '2025-12-31T00:00:00Z', '0d'])
      expect(() => parseExpiry(bad, now), bad).toThrow(/--expires/);
  });
  it('reads --identity as <platform>:<user id>', () => {
    expect(parsePlatformIdentity('platform_b:80351110224678912')).toEqual({
      platform: 'platform_b',
      user_id: '80351110224678912',
    });
    for (const bad of ['U024BE7LH', 'slack:U1', 'platform_a:', 'platform_a:a b'])
      expect(parsePlatformIdentity(bad), bad).toBeNull();
  });
  it('refuses a bad role or identity before it opens the data dir', () => {
    const cfg = loadConfig({ ATLAS_DATA_DIR: '/nonexistent/atlas-keys-test' });
    expect(() => createKeyCommand(cfg, { name: 'x', role: 'owner' })).toThrow(/--role is one of reader, member, admin/);
    expect(() => createKeyCommand(cfg, { name: 'x', role: 'reader', identity: 'U1' })).toThrow(/--identity/);
  });
});
