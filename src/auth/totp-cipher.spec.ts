import { describe, expect, it } from '@jest/globals';
import { TotpCipher } from './totp-cipher.js';

describe('TotpCipher (AES-256-GCM of two-factor secrets)', () => {
  const cipher = new TotpCipher(Buffer.alloc(32, 1));
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

  it('round-trips a secret for its user; each encryption has its own IV', () => {
    const stored = cipher.encrypt(secret, 7);
    expect(stored).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(secret);
    expect(cipher.decrypt(stored, 7)).toBe(secret);
    expect(cipher.encrypt(secret, 7)).not.toBe(stored);
  });

  it('refuses another user, another key, a changed byte and another format', () => {
    const stored = cipher.encrypt(secret, 7);
    expect(() => cipher.decrypt(stored, 8)).toThrow();
    expect(() => new TotpCipher(Buffer.alloc(32, 2)).decrypt(stored, 7)).toThrow();
    const [format, iv, tag, body] = stored.split('.');
    const flipped = Buffer.from(body, 'base64url');
    flipped[0] ^= 1;
    expect(() => cipher.decrypt([format, iv, tag, flipped.toString('base64url')].join('.'), 7)).toThrow();
    expect(() => cipher.decrypt(`v2.${iv}.${tag}.${body}`, 7)).toThrow('not a stored TOTP secret');
    expect(() => new TotpCipher(Buffer.alloc(16))).toThrow('32 bytes');
  });
});
